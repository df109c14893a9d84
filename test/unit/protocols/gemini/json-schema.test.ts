import { describe, expect, it } from 'vitest';
import { geminiToJsonSchema, jsonSchemaToGemini } from '../../../../src/protocols/gemini/json-schema.js';
import { withoutSchemaDialect } from '../../../../src/protocols/gemini/schema-dialect.js';

// Gemini's Schema (OpenAPI 3.0's subset: types in capitals, nullable, counts as int64 strings)
// and JSON Schema, each into the other.

describe("Gemini's Schema → JSON Schema", () => {
  it('types in lower case, nullable as a type list, counts as numbers, enums and the example kept', () => {
    expect(
      geminiToJsonSchema({
        type: 'OBJECT',
        description: 'A search',
        properties: {
          query: { type: 'STRING', minLength: '1', maxLength: '200', example: 'weather' },
          limit: { type: 'INTEGER', nullable: true, minimum: 1, maximum: 50 },
          mode: { type: 'STRING', enum: ['fast', 'deep'], format: 'enum' },
          tags: { type: 'ARRAY', items: { type: 'STRING' }, maxItems: '5' },
        },
        required: ['query'],
        propertyOrdering: ['query', 'limit'],
      }),
    ).toEqual({
      type: 'object',
      description: 'A search',
      properties: {
        query: { type: 'string', minLength: 1, maxLength: 200, examples: ['weather'] },
        limit: { type: ['integer', 'null'], minimum: 1, maximum: 50 },
        mode: { type: 'string', enum: ['fast', 'deep'], format: 'enum' },
        tags: { type: 'array', items: { type: 'string' }, maxItems: 5 },
      },
      required: ['query'],
    });
  });

  it('anyOf kept member by member; a type in lower case read too; garbage is no schema', () => {
    expect(geminiToJsonSchema({ anyOf: [{ type: 'STRING' }, { type: 'number' }] })).toEqual({ anyOf: [{ type: 'string' }, { type: 'number' }] });
    expect(geminiToJsonSchema({ type: 'TEXT', minItems: 'x' })).toEqual({});
    expect(geminiToJsonSchema('OBJECT')).toEqual({});
  });
});

describe('JSON Schema → Gemini Schema', () => {
  it('types in capitals, a null in a type list or an anyOf as nullable, counts as strings, const as an enum of one', () => {
    expect(
      jsonSchemaToGemini({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        additionalProperties: false,
        properties: {
          name: { type: ['string', 'null'], maxLength: 80 },
          unit: { anyOf: [{ type: 'string', enum: ['c', 'f'] }, { type: 'null' }] },
          kind: { const: 'weather' },
          count: { type: 'integer', minimum: 0 },
          either: { oneOf: [{ type: 'string' }, { type: 'integer' }] },
        },
        required: ['name'],
      }),
    ).toEqual({
      type: 'OBJECT',
      properties: {
        name: { type: 'STRING', nullable: true, maxLength: '80' },
        unit: { type: 'STRING', enum: ['c', 'f'], nullable: true },
        kind: { type: 'STRING', enum: ['weather'] },
        count: { type: 'INTEGER', minimum: 0 },
        either: { anyOf: [{ type: 'STRING' }, { type: 'INTEGER' }] },
      },
      required: ['name'],
    });
  });

  it('$refs into $defs (or definitions) resolved in place; a reference to nothing, or to itself, left as it is', () => {
    const schema = {
      type: 'object',
      properties: { home: { $ref: '#/$defs/Place' }, work: { $ref: '#/definitions/Place' }, lost: { $ref: '#/$defs/Nowhere' } },
      $defs: { Place: { type: 'object', properties: { city: { type: 'string' } } } },
      definitions: { Place: { type: 'object', properties: { city: { type: 'string' } } } },
    };
    expect(jsonSchemaToGemini(schema)).toEqual({
      type: 'OBJECT',
      properties: {
        home: { type: 'OBJECT', properties: { city: { type: 'STRING' } } },
        work: { type: 'OBJECT', properties: { city: { type: 'STRING' } } },
        lost: {},
      },
    });
    const loop = { $defs: { A: { $ref: '#/$defs/A' } }, $ref: '#/$defs/A' };
    expect(jsonSchemaToGemini(loop)).toEqual({});
  });

  it('and back: what both sides have words for comes through a round trip', () => {
    const gemini = {
      type: 'OBJECT',
      properties: { q: { type: 'STRING', nullable: true, enum: ['a', 'b'] }, n: { type: 'ARRAY', items: { type: 'NUMBER' }, minItems: '1' } },
    };
    expect(jsonSchemaToGemini(geminiToJsonSchema(gemini))).toEqual(gemini);
  });
});

describe('JSON Schema as parametersJsonSchema takes it', () => {
  it('$schema left out at every level, everything else as written; a property named $schema and data kept', () => {
    const schema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      additionalProperties: false,
      properties: {
        $schema: { type: 'string', description: 'a property of that name' },
        place: { $ref: '#/$defs/Place' },
        tags: { type: 'array', items: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'string' } },
        either: { anyOf: [{ $schema: 'x', type: 'string' }, { type: 'null' }], default: { $schema: 'data, not a schema' } },
      },
      $defs: { Place: { $schema: 'x', type: 'object', properties: { city: { type: 'string' } } } },
    };
    expect(withoutSchemaDialect(schema)).toEqual({
      type: 'object',
      additionalProperties: false,
      properties: {
        $schema: { type: 'string', description: 'a property of that name' },
        place: { $ref: '#/$defs/Place' },
        tags: { type: 'array', items: { type: 'string' } },
        either: { anyOf: [{ type: 'string' }, { type: 'null' }], default: { $schema: 'data, not a schema' } },
      },
      $defs: { Place: { type: 'object', properties: { city: { type: 'string' } } } },
    });
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    const plain = { type: 'object', properties: { q: { type: 'string' } } };
    expect(withoutSchemaDialect(plain)).toBe(plain);
  });
});
