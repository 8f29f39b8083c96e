import { FlowctlError } from '../errors.js'
import type { Store } from './types.js'
export async function openPostgresStore(_url: string, _options: { schema?: string } = {}): Promise<Store> {
  throw new FlowctlError('STORE_UNAVAILABLE', 'PostgreSQL store not written yet')
}
