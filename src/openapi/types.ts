// The part of the OpenAPI 3.0.3 document model that flowctl writes.
import type { HttpMethod, JsonSchema } from '../model/project.js'

/** A schema or a `{ $ref }` into components. */
export type SchemaOrRef = JsonSchema

interface MediaType {
  schema: SchemaOrRef
}

export interface OpenApiResponse {
  description: string
  headers?: Record<string, { description: string; schema: JsonSchema }>
  content?: Record<string, MediaType>
}

export interface OpenApiParameter {
  name: string
  in: 'path' | 'query' | 'header'
  description?: string
  required: boolean
  schema: JsonSchema
}

export interface OpenApiOperation {
  summary: string
  description?: string
  operationId: string
  tags: string[]
  security: Record<string, string[]>[]
  parameters?: OpenApiParameter[]
  requestBody?: { required: boolean; content: Record<string, MediaType> }
  responses: Record<string, OpenApiResponse>
}

export type OpenApiPathItem = Partial<Record<HttpMethod, OpenApiOperation>>

export type SecurityScheme = { type: 'http'; scheme: 'bearer' | 'basic' } | { type: 'apiKey'; in: 'header'; name: string; description?: string }

export interface OpenApiDocument {
  openapi: '3.0.3'
  info: { title: string; version: string }
  servers: { url: string }[]
  tags: { name: string }[]
  paths: Record<string, OpenApiPathItem>
  components?: {
    schemas?: Record<string, JsonSchema>
    securitySchemes?: Record<string, SecurityScheme>
  }
}
