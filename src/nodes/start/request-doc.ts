// A Start's part of the OpenAPI document: the operation's parameters and request body.
import type { JsonSchema, StartSettings } from '../../model/project.js'
import type { NodeRequestDoc } from '../types.js'
import { isRecord } from '../../internal/is-record.js'

/** The operation's parameters (path, query and header inputs) and body (one media type per accepted body type). */
export function documentedRequest(start: StartSettings): NodeRequestDoc {
  const { path, query, headers, body } = start.inputs
  const pathProperties = propertiesOf(path)
  const parameters: NodeRequestDoc['parameters'] = [
    ...start.pathParams.map((name) => ({ name, in: 'path' as const, required: true, schema: pathProperties[name] })),
    ...objectParameters(query, 'query'),
    ...objectParameters(headers, 'header'),
  ]
  if (start.method === 'get') return { parameters, body: null }
  // A text body is one string (SPEC §11).
  if (start.accept.includes('text')) return { parameters, body: { required: body !== undefined, content: { 'text/plain': body ?? { type: 'string' } } } }
  if (!body) return { parameters, body: null }
  const content: Record<string, JsonSchema> = {}
  if (start.accept.includes('json')) content['application/json'] = body
  if (start.accept.includes('form')) content['application/x-www-form-urlencoded'] = body
  return { parameters, body: { required: true, content } }
}

function objectParameters(schema: JsonSchema | undefined, location: 'query' | 'header'): NodeRequestDoc['parameters'] {
  const required = new Set(Array.isArray(schema?.required) ? schema.required : [])
  return Object.entries(propertiesOf(schema)).map(([name, property]) => ({ name, in: location, required: required.has(name), schema: property }))
}

function propertiesOf(schema: JsonSchema | undefined): Record<string, unknown> {
  return isRecord(schema?.properties) ? schema.properties : {}
}
