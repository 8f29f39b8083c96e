// Baseline server: one plain h3 v2 route on node:http, answering POST /order with 201 and
// { id: <random hex>, ok: true }. It parses the body (like flowctl must) but validates nothing.
import { createServer } from 'node:http'
import { randomBytes } from 'node:crypto'
import { H3 } from 'h3'
import { toNodeHandler } from 'h3/node'

const port = Number(process.argv[2] ?? 3001)
const app = new H3()
app.post('/order', async (event) => {
  await event.req.json()
  event.res.status = 201
  return { id: randomBytes(12).toString('hex'), ok: true }
})
app.get('/order', () => ({ ok: true }))
createServer(toNodeHandler(app)).listen(port, '127.0.0.1')
