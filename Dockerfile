# Funil's production image: TypeScript compiled in the first stage, plain JavaScript run by `node` in the
# second, as the unprivileged `node` user, with the data directory (embedded database, files, keys) on a
# volume. scripts/container-steps.sh runs these same steps on a host, which is how CI checks them.
ARG NODE_VERSION=22

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json prisma.config.ts ./
COPY prisma ./prisma
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM node:${NODE_VERSION}-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=4000 DATA_DIR=/data
WORKDIR /app
COPY package.json package-lock.json prisma.config.ts ./
COPY prisma ./prisma
# The production dependencies (their install generates the Prisma client); the extraction bundle's cache
# is the one directory under node_modules the server writes.
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force \
  && mkdir -p node_modules/.cache /data && chown node:node node_modules/.cache /data
COPY --from=build /app/dist ./dist
USER node
VOLUME /data
EXPOSE 4000
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/ready`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "--import", "./dist/observability/preload.js", "dist/main.js"]
