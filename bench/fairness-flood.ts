// The flooding organisation of the fairness line (bench/fairness.ts), in its own process like every load
// generator of the bench: it keeps `uploads` knowledge uploads of a 1.7 MB CSV going against the server
// until it is killed. argv[2]: JSON { url, key, uploads }. Prints one line per answer that is not 201.
const { url, key, uploads } = JSON.parse(process.argv[2]) as { url: string; key: string; uploads: number };
const medium = 'nome,telefone,cidade,estado\n'.repeat(60_000);

async function flood(n: number) {
  for (let i = 0; ; i++) {
    const t = performance.now();
    const form = new FormData();
    form.set('name', `a${n}-${i}`);
    form.set('file', new File([medium], `a${n}-${i}.csv`));
    const r = await fetch(`${url}/backend/knowledge`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    await r.arrayBuffer();
    if (r.status !== 201) console.log(`flood: ${r.status}`);
    if (process.env.BENCH_FAIRNESS_TRACE) console.log(`flood: an upload of A answered in ${Math.round(performance.now() - t)} ms`);
  }
}

await Promise.all(Array.from({ length: uploads }, (_, n) => flood(n)));
