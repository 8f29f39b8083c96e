import { describe, expect, it } from 'vitest'
import { referenceName, slugify } from '../../src/project/slug.js'

describe('slugify', () => {
  it.each([
    ['Create Order', 'create-order'],
    ['Créer  Commande!', 'creer-commande'],
    ['  --Hello__World--  ', 'hello-world'],
    ['Ünïcödé Straße', 'unicode-stra-e'], // ß has no NFD decomposition: it is a run outside a-z0-9
    ['order-status', 'order-status'],
    ['API v2.1', 'api-v2-1'],
    ['!!!', ''],
    ['', ''],
  ])('%j → %j', (name, slug) => {
    expect(slugify(name)).toBe(slug)
  })
})

describe('referenceName', () => {
  it.each([
    ['Start', 'start'],
    ['Big Order', 'big_order'],
    ['BIG  order', 'big_order'],
    ['big order!', 'big_order_'],
    ['save_big', 'save_big'],
    ['Result 2', 'result_2'],
    ['x-tenant', 'x_tenant'],
  ])('%j → %j', (name, ref) => {
    expect(referenceName(name)).toBe(ref)
  })
})
