// An expression worker process (expression-pool.ts starts it): evaluates the expressions that could run
// long, one at a time, with the same in-thread bounds as the main thread. What those bounds cannot stop
// (one built-in running long, a value filling the heap) the pool stops by killing this process.
import { compileInThread, evaluateInThread, ExpressionError, type ExpressionLimits, type ThreadExpression } from './expression-core.js'
import type { ExpressionJob, ExpressionReply } from './expression-pool.js'

/** Compiled expressions by limits and source; a worker serves every project, so the map is bounded. */
const compiled = new Map<string, ThreadExpression>()
const MAX_COMPILED = 500

function compiledFor(source: string, limits: ExpressionLimits): ThreadExpression {
  const key = `${limits.expressionMs}:${limits.textChars}:${limits.arrayItems}:${source}`
  let expression = compiled.get(key)
  if (!expression) {
    if (compiled.size >= MAX_COMPILED) compiled.clear()
    expression = compileInThread(source, limits, true)
    compiled.set(key, expression)
  }
  return expression
}

const send = process.send?.bind(process)
if (!send) throw new Error('expression-worker.js runs as a process started by expression-pool.js')
const reply = (message: ExpressionReply) => void send(message)
// The server went away (even SIGKILLed): nothing is left to answer.
process.on('disconnect', () => process.exit(0))
process.on('message', (job: ExpressionJob) => {
  evaluateInThread(compiledFor(job.source, job.limits), job.input).then(
    (value) => reply({ id: job.id, ok: true, value }),
    (error: unknown) =>
      reply({ id: job.id, ok: false, message: error instanceof ExpressionError ? error.message : String((error as Error)?.message ?? error) }),
  )
})
// Loads jsonata before saying it is ready, so no evaluation's deadline pays for it.
compileInThread('1', { expressionMs: 50, textChars: 1, arrayItems: 1 }, true)
reply({ ready: true })
