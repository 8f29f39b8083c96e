import { describe, expect, it } from 'vitest'
import { toOpenApiSchema } from '../../src/openapi/schema-convert.js'
import type { JsonSchema } from '../../src/model/project.js'

const cases: [string, JsonSchema, JsonSchema][] = [
  [
    'keeps portable string keywords',
    { type: 'string', minLength: 1, maxLength: 9, pattern: '^a', format: 'email', description: 'd' },
    { type: 'string', format: 'email', description: 'd', minLength: 1, maxLength: 9, pattern: '^a' },
  ],
  ['keeps numeric bounds', { type: 'number', minimum: 1, maximum: 5, multipleOf: 0.5 }, { type: 'number', minimum: 1, maximum: 5, multipleOf: 0.5 }],
  ['const becomes a one-value enum', { const: 'open' }, { enum: ['open'] }],
  ['const null becomes a nullable enum', { type: 'string', const: null }, { type: 'string', nullable: true, enum: [null] }],
  ['type with null becomes nullable', { type: ['string', 'null'] }, { type: 'string', nullable: true }],
  ['null first in the type array too', { type: ['null', 'integer'], minimum: 0 }, { type: 'integer', nullable: true, minimum: 0 }],
  ['only null: nullable beside a type (nullable-type-sibling)', { type: 'null' }, { type: 'string', nullable: true, enum: [null] }],
  ['an untyped enum with null gets the type of its other values', { enum: ['a', 'b', null] }, { type: 'string', nullable: true, enum: ['a', 'b', null] }],
  ['an untyped enum of integers and numbers with null is a number', { enum: [1, 2.5, null] }, { type: 'number', nullable: true, enum: [1, 2.5, null] }],
  ['const null alone is a nullable string', { const: null }, { type: 'string', nullable: true, enum: [null] }],
  ['a mixed untyped enum cannot carry nullable', { enum: [1, 'a', null] }, { enum: [1, 'a', null] }],
  ['nullable without a type or enum says nothing and is dropped', { nullable: true, description: 'd' }, { description: 'd' }],
  ['several types become a oneOf', { type: ['string', 'boolean'] }, { oneOf: [{ type: 'string' }, { type: 'boolean' }] }],
  [
    'several types with null: nullable on one choice',
    { type: ['string', 'boolean', 'null'] },
    { oneOf: [{ type: 'string', nullable: true }, { type: 'boolean' }] },
  ],
  ['number swallows integer so oneOf stays disjoint', { type: ['integer', 'number'] }, { type: 'number' }],
  [
    'several types beside an own oneOf nest in allOf',
    { type: ['string', 'number'], oneOf: [{ minLength: 1 }, { minimum: 1 }] },
    { oneOf: [{ minLength: 1 }, { minimum: 1 }], allOf: [{ oneOf: [{ type: 'string' }, { type: 'number' }] }] },
  ],
  ['numeric exclusiveMinimum', { type: 'number', exclusiveMinimum: 0 }, { type: 'number', minimum: 0, exclusiveMinimum: true }],
  ['numeric exclusiveMaximum', { type: 'number', exclusiveMaximum: 10 }, { type: 'number', maximum: 10, exclusiveMaximum: true }],
  ['the stricter of minimum and exclusiveMinimum wins (exclusive)', { minimum: 1, exclusiveMinimum: 1 }, { minimum: 1, exclusiveMinimum: true }],
  ['the stricter of minimum and exclusiveMinimum wins (inclusive)', { minimum: 5, exclusiveMinimum: 1 }, { minimum: 5 }],
  ['draft-4 boolean exclusiveMinimum is kept', { minimum: 1, exclusiveMinimum: true }, { minimum: 1, exclusiveMinimum: true }],
  [
    'drops extensions and non-portable keywords',
    {
      type: 'object',
      'x-ui': { widget: 'x' },
      $schema: 'http://json-schema.org/draft-07/schema#',
      $id: 'a',
      if: { type: 'object' },
      then: {},
      else: {},
      $comment: 'c',
      patternProperties: { a: {} },
    },
    { type: 'object', additionalProperties: true },
  ],
  [
    'recurses into properties',
    { type: 'object', properties: { a: { const: 1, 'x-k': 1 }, b: { type: ['number', 'null'] } }, required: ['a'] },
    { type: 'object', properties: { a: { enum: [1] }, b: { type: 'number', nullable: true } }, required: ['a'] },
  ],
  [
    'recurses into items',
    { type: 'array', items: { type: 'string', const: 'x' }, minItems: 1, uniqueItems: true },
    { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', enum: ['x'] } },
  ],
  ['array without items gets items: {}', { type: 'array', maxItems: 3 }, { type: 'array', maxItems: 3, items: {} }],
  [
    'tuple items become anyOf',
    { type: 'array', items: [{ type: 'string' }, { type: 'number' }] },
    { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'number' }] } },
  ],
  ['additionalProperties boolean', { type: 'object', additionalProperties: false }, { type: 'object', additionalProperties: false }],
  [
    'additionalProperties schema is converted',
    { type: 'object', additionalProperties: { type: ['string', 'null'] } },
    { type: 'object', additionalProperties: { type: 'string', nullable: true } },
  ],
  [
    'combinators convert their members',
    { anyOf: [{ const: 1 }, { type: 'string', 'x-a': 1 }], allOf: [{ exclusiveMinimum: 2 }] },
    { anyOf: [{ enum: [1] }, { type: 'string' }], allOf: [{ minimum: 2, exclusiveMinimum: true }] },
  ],
  [
    'empty required and enum are dropped (3.0.3 needs at least one)',
    { type: 'object', required: [], enum: [] },
    { type: 'object', additionalProperties: true },
  ],
  ['enum with null makes the schema nullable', { type: 'string', enum: ['a', null] }, { type: 'string', nullable: true, enum: ['a', null] }],
  ['examples becomes example', { type: 'string', examples: ['a', 'b'] }, { type: 'string', example: 'a' }],
  [
    'keeps title, default, nullable',
    { nullable: true, type: 'string', default: 'x', title: 'T' },
    { title: 'T', type: 'string', nullable: true, default: 'x' },
  ],
  ['drops values of the wrong type', { type: 'string', minLength: -1, maxLength: 1.5, pattern: 3, multipleOf: 0 }, { type: 'string' }],
  ['drops unknown type names', { type: 'date' }, {}],
  [
    'local $ref into $defs is inlined',
    { type: 'object', properties: { a: { $ref: '#/$defs/id' } }, $defs: { id: { type: 'string', const: 'x' } } },
    { type: 'object', properties: { a: { type: 'string', enum: ['x'] } } },
  ],
  [
    'a recursive $ref stops at {}',
    { $defs: { n: { type: 'object', properties: { child: { $ref: '#/$defs/n' } } } }, $ref: '#/$defs/n' },
    { type: 'object', properties: { child: {} } },
  ],
  ['an unknown $ref becomes {}', { type: 'object', properties: { a: { $ref: 'https://example.com/x.json' } } }, { type: 'object', properties: { a: {} } }],
  // SPEC §20: an object of unknown keys says so, or generators type it as an empty record.
  ['an object without properties allows any key', { type: 'object' }, { type: 'object', additionalProperties: true }],
  ['a nullable object without properties too', { type: ['object', 'null'] }, { type: 'object', nullable: true, additionalProperties: true }],
  [
    'an object item without properties too',
    { type: 'array', items: { type: 'object' } },
    { type: 'array', items: { type: 'object', additionalProperties: true } },
  ],
  ['additionalProperties as written is kept', { type: 'object', additionalProperties: false }, { type: 'object', additionalProperties: false }],
  [
    'an additionalProperties schema is kept',
    { type: 'object', additionalProperties: { type: 'string' } },
    { type: 'object', additionalProperties: { type: 'string' } },
  ],
  [
    'an object with properties is left closed-or-open as written',
    { type: 'object', properties: { a: { type: 'string' } } },
    { type: 'object', properties: { a: { type: 'string' } } },
  ],
  // SPEC §20: a tuple's anyOf lists each item schema once.
  [
    'tuple items of repeated schemas are listed once',
    { type: 'array', items: [{ type: 'string' }, { type: 'number' }, { type: 'string' }] },
    { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'number' }] } },
  ],
  [
    'a tuple of one schema repeated is that schema',
    { type: 'array', items: [{ type: 'string' }, { type: 'string' }] },
    { type: 'array', items: { type: 'string' } },
  ],
  [
    'tuple items equal after conversion are listed once',
    { type: 'array', items: [{ const: 1 }, { enum: [1] }, { type: 'integer', 'x-a': 1 }, { type: 'integer' }] },
    { type: 'array', items: { anyOf: [{ enum: [1] }, { type: 'integer' }] } },
  ],
  ['boolean sub-schemas', { type: 'object', properties: { a: true, b: false } }, { type: 'object', properties: { a: {}, b: { not: {} } } }],
]

describe('toOpenApiSchema', () => {
  it.each(cases)('%s', (_name, input, expected) => {
    const before = structuredClone(input)
    expect(toOpenApiSchema(input)).toEqual(expected)
    expect(input).toEqual(before) // never mutates the project's schema
  })

  it('writes keys in one canonical order, whatever the input order', () => {
    const a = toOpenApiSchema({ required: ['x'], properties: { x: { maxLength: 2, type: 'string' } }, description: 'd', type: 'object' })
    const b = toOpenApiSchema({ type: 'object', description: 'd', properties: { x: { type: 'string', maxLength: 2 } }, required: ['x'] })
    expect(JSON.stringify(a)).toBe(JSON.stringify(b))
    expect(Object.keys(a)).toEqual(['type', 'description', 'properties', 'required'])
  })

  it('does not share default or enum values with the input', () => {
    const input = { type: 'object', default: { a: 1 }, enum: [{ a: 1 }] }
    const out = toOpenApiSchema(input)
    ;(out.default as { a: number }).a = 2
    ;(out.enum as { a: number }[])[0]!.a = 3
    expect(input).toEqual({ type: 'object', default: { a: 1 }, enum: [{ a: 1 }] })
  })
})
