// Bytes (decimal strings; inputs also Int or "16Gi") and JSON.
import { GraphQLError, GraphQLScalarType, Kind, type ValueNode } from "graphql";
import { parseBytes } from "../../store/index.js";

function bytesInput(value: unknown): bigint {
  const b = parseBytes(value);
  if (b === null)
    throw new GraphQLError(
      `Bytes must be a non-negative whole number of bytes or a quantity like "16Gi", got ${JSON.stringify(value)}`,
    );
  return b;
}

export const Bytes = new GraphQLScalarType({
  name: "Bytes",
  serialize: (v) => (typeof v === "number" ? BigInt(Math.round(v)).toString() : String(v)),
  parseValue: bytesInput,
  parseLiteral: (ast) => {
    if (ast.kind === Kind.INT || ast.kind === Kind.STRING)
      return bytesInput(ast.kind === Kind.INT ? Number(ast.value) : ast.value);
    throw new GraphQLError("Bytes must be a string or an integer");
  },
});

function literal(ast: ValueNode): unknown {
  switch (ast.kind) {
    case Kind.STRING:
    case Kind.BOOLEAN:
    case Kind.ENUM:
      return ast.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(ast.value);
    case Kind.NULL:
      return null;
    case Kind.LIST:
      return ast.values.map(literal);
    case Kind.OBJECT:
      return Object.fromEntries(ast.fields.map((f) => [f.name.value, literal(f.value)]));
    default:
      throw new GraphQLError("JSON literals cannot contain variables");
  }
}

export const JSONScalar = new GraphQLScalarType({
  name: "JSON",
  serialize: (v) => v,
  parseValue: (v) => v,
  parseLiteral: literal,
});
