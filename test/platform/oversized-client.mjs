// A client in a process of its own (sharing the server's event loop hides the failure): sends a body of
// `mb` MB with Node's fetch, `times` times, to `path`; prints one JSON line per answer.
const [url, key, path, mb, times] = process.argv.slice(2);
const big = new Uint8Array(Number(mb) * 1024 * 1024).fill(97);
for (let i = 0; i < Number(times); i++) {
  const form = new FormData();
  form.append('name', 'grande');
  form.append('file', new Blob([big], { type: 'text/plain' }), 'big.txt');
  try {
    const r = await fetch(url + path, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    console.log(JSON.stringify({ status: r.status, connection: r.headers.get('connection'), body: await r.json() }));
  } catch (e) {
    const cause = /** @type {{ cause?: { code?: string } }} */ (e).cause;
    console.log(JSON.stringify({ status: 0, error: cause?.code ?? String(e) }));
  }
}
