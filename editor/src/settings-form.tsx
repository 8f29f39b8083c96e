// A node's settings form, generated from its kind's settings schema (a small generator rather than
// react-jsonschema-form: see editor/README.md for the sizes). Strings, numbers, booleans and enums get
// their own inputs; objects, arrays and "any" values a JSON box, applied once it parses. Every field
// can take a `{{ reference }}` from the picker, inserted where the cursor was.
import { useEffect, useState } from 'react'
import type { JsonSchema, NodeKindInfo } from './api.js'
import type { GraphNode } from './document.js'

/** Where the reference picker inserts: the field that last had the focus. */
export interface InsertTarget {
  insert(text: string): void
}

interface FieldProps {
  name: string
  schema: JsonSchema
  required: boolean
  value: unknown
  onChange(value: unknown): void
  onFocusTarget(target: InsertTarget): void
}

function resolveRef(schema: JsonSchema, defs: Record<string, JsonSchema>): JsonSchema {
  const ref = schema.$ref
  if (typeof ref === 'string' && ref.startsWith('#/$defs/')) return { ...defs[ref.slice(8)], ...schema, $ref: undefined }
  return schema
}

function kindOfField(schema: JsonSchema): 'text' | 'number' | 'boolean' | 'enum' | 'json' {
  if (Array.isArray(schema.enum) && schema.enum.every((v) => typeof v === 'string')) return 'enum'
  if (schema.type === 'string') return 'text'
  if (schema.type === 'integer' || schema.type === 'number') return 'number'
  if (schema.type === 'boolean') return 'boolean'
  return 'json'
}

/** Inserts `text` at the cursor of an input, returning the new value. */
function insertAt(element: HTMLInputElement | HTMLTextAreaElement | null, value: string, text: string): string {
  if (!element) return value + text
  const start = element.selectionStart ?? value.length
  const end = element.selectionEnd ?? start
  return value.slice(0, start) + text + value.slice(end)
}

function Field({ name, schema, required, value, onChange, onFocusTarget }: FieldProps) {
  const kind = kindOfField(schema)
  const description = typeof schema.description === 'string' ? schema.description : ''
  const id = `setting-${name}`
  const asText = (v: unknown) => (v === undefined ? '' : kind === 'json' ? JSON.stringify(v, null, 2) : String(v))
  const [draft, setDraft] = useState(asText(value))
  const [invalid, setInvalid] = useState('')
  // The document changed elsewhere (the code view, another field): show its value.
  useEffect(() => {
    setDraft((current) => (sameValue(parse(current), value) ? current : asText(value)))
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [JSON.stringify(value)])

  function parse(text: string): unknown {
    if (text.trim() === '') return undefined
    if (kind === 'number') return /^-?\d+(\.\d+)?$/.test(text.trim()) ? Number(text) : text
    if (kind === 'json') {
      try {
        return JSON.parse(text)
      } catch {
        // A bare template or word is kept as text, as YAML would read it.
        return /^[^{["]/.test(text.trim()) ? text : INVALID
      }
    }
    return text
  }

  function commit(text: string) {
    setDraft(text)
    const parsed = parse(text)
    if (parsed === INVALID) return setInvalid('not valid JSON yet')
    setInvalid('')
    onChange(parsed)
  }

  const label = (
    <label htmlFor={id}>
      {name}
      {required ? <span className="req"> *</span> : null}
      {description ? <span className="hint"> — {description}</span> : null}
    </label>
  )
  if (kind === 'boolean') {
    return (
      <div className="field">
        <input id={id} type="checkbox" checked={value === true} onChange={(e) => onChange(e.target.checked ? true : undefined)} /> {label}
      </div>
    )
  }
  if (kind === 'enum') {
    return (
      <div className="field">
        {label}
        <select id={id} value={typeof value === 'string' ? value : ''} onChange={(e) => onChange(e.target.value || undefined)}>
          <option value="">{required ? 'choose…' : '(default)'}</option>
          {(schema.enum as string[]).map((v) => (
            <option key={v}>{v}</option>
          ))}
        </select>
      </div>
    )
  }
  const focus = (element: HTMLInputElement | HTMLTextAreaElement) => onFocusTarget({ insert: (text) => commit(insertAt(element, element.value, text)) })
  return (
    <div className="field">
      {label}
      {kind === 'json' ? (
        <textarea
          id={id}
          name={name}
          spellCheck={false}
          value={draft}
          rows={Math.min(8, draft.split('\n').length + 1)}
          onChange={(e) => commit(e.target.value)}
          onFocus={(e) => focus(e.target)}
        />
      ) : (
        <input id={id} name={name} type="text" value={draft} onChange={(e) => commit(e.target.value)} onFocus={(e) => focus(e.target)} />
      )}
      {invalid ? <div className="invalid">{invalid}</div> : null}
    </div>
  )
}

const INVALID = Symbol('invalid')

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b)
}

export interface SettingsFormProps {
  node: GraphNode
  kind: NodeKindInfo | undefined
  defs: Record<string, JsonSchema>
  onChange(key: string, value: unknown): void
  onFocusTarget(target: InsertTarget): void
}

export function SettingsForm({ node, kind, defs, onChange, onFocusTarget }: SettingsFormProps) {
  const schema = kind?.settingsSchema ?? {}
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : [])
  // Required settings first, then the rest in the schema's order.
  const names = [...Object.keys(properties).filter((n) => required.has(n)), ...Object.keys(properties).filter((n) => !required.has(n))]
  return (
    <form className="settings" key={node.id} onSubmit={(e) => e.preventDefault()} aria-label={`Settings of ${node.id}`}>
      <h3>
        {node.name} <code>{node.type}</code>
      </h3>
      {kind ? <p className="hint">{kind.description}</p> : <p className="invalid">Unknown node kind “{node.type}”.</p>}
      <div className="field">
        <label htmlFor="setting-name">name</label>
        <input id="setting-name" type="text" value={node.name} onChange={(e) => onChange('name', e.target.value)} />
        <div className="hint">
          id <code>{node.id}</code>
        </div>
      </div>
      {names.map((name) => (
        <Field
          key={`${node.id}:${name}`}
          name={name}
          schema={resolveRef(properties[name]!, defs)}
          required={required.has(name)}
          value={node.settings[name]}
          onChange={(value) => onChange(name, value)}
          onFocusTarget={onFocusTarget}
        />
      ))}
    </form>
  )
}
