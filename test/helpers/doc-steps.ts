// The curl examples of a documentation section, run as written: each ```sh block that calls curl, in
// order, through bash against a server, the `# keep: NAME=.path` values of one answer feeding the next
// blocks (as shell variables), `# status: 400` the status an example shows (else a 2xx).
import { execFile } from 'node:child_process';
import { expect } from 'vitest';

export interface Step {
  script: string;
  keep: Record<string, string>;
  /** `# status: 400`: the HTTP status the example shows (default: a 2xx). */
  status?: number;
}

/**
 * The ```sh blocks of these sections that call curl, in order, with their `# keep: NAME=.path` lines. The
 * subscription's `curl -N` keeps its stream open: test/deals/live.test.ts runs that one.
 */
export function curlSteps(sections: string[]): Step[] {
  const blocks = sections
    .flatMap((section) => [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]))
    .filter((b) => /^curl /m.test(b) && !/^curl -N /m.test(b));
  return blocks.map((block) => {
    const keep: Record<string, string> = {};
    const status = /^# status: (\d{3})$/m.exec(block);
    for (const line of block.split('\n').filter((l) => l.startsWith('# keep:'))) {
      for (const pair of line.slice('# keep:'.length).trim().split(/\s+/)) {
        const [name, path] = pair.split('=');
        keep[name] = path;
      }
    }
    return {
      script: block
        .split('\n')
        .filter((l) => !l.startsWith('#'))
        .join('\n'),
      keep,
      status: status ? Number(status[1]) : undefined,
    };
  });
}

/** `.data.id`, `.stages[1].id` */
function pick(value: unknown, path: string): unknown {
  return path
    .replace(/\[(\d+)\]/g, '.$1')
    .split('.')
    .filter(Boolean)
    .reduce<any>((v, key) => v?.[key], value);
}

/** bash with the step's script; asynchronous, so the receiver in this process can answer meanwhile. */
function bash(script: string, env: Record<string, string>): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('bash', ['-c', script], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 30_000 }, (error, stdout, stderr) =>
      resolve({ status: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Runs the steps in order with `vars` (the kept values added to it); answers each step's JSON body. */
export async function runSteps(steps: Step[], vars: Record<string, string>): Promise<any[]> {
  const answers: any[] = [];
  for (const step of steps) {
    // Each curl also prints the HTTP status on a last line; -S shows curl's own errors.
    const script = `curl() { command curl -sS -w '\\n%{http_code}' "$@"; }\n${step.script}`;
    const run = await bash(script, vars);
    expect(run.status, `${step.script}\n${run.stderr}`).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    const status = Number(lines.pop());
    const body = JSON.parse(lines.join('\n'));
    if (step.status) expect(status, `${step.script}\n${run.stdout}`).toBe(step.status);
    else {
      expect(status, `${step.script}\n${run.stdout}`).toBeGreaterThanOrEqual(200);
      expect(status, `${step.script}\n${run.stdout}`).toBeLessThan(300);
    }
    for (const [name, path] of Object.entries(step.keep)) {
      const value = pick(body, path);
      expect(typeof value, `${name}=${path} in ${run.stdout}`).toBe('string');
      vars[name] = value as string;
    }
    answers.push(body);
  }
  return answers;
}
