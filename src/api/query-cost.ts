// What an operation may cost, counted in the rows it can make the server read, each weighed by
// what it costs the event loop (ROW_WEIGHTS): a list field multiplies what it selects by its page
// size — `first` whether written in the query, passed as a variable or left to its default — and
// lists without `first` by an estimate of their length (clusters and their nodes: the fleet's
// real size, FleetSize). Fields that compute much per call (fairShare) carry a fixed cost, and
// submits a point per KiB of the templates and manifests they send.
// Checked with the request's variables, before anything runs, over HTTP and WebSocket alike.
import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  getNamedType,
  getNullableType,
  GraphQLError,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  isListType,
  isObjectType,
  isInterfaceType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
  valueFromAST,
  valueFromASTUntyped,
} from "graphql";
import { MAX_SHARE_SAMPLES } from "../store/index.js";

export const MAX_QUERY_COST = 20_000;

/**
 * Points per row of a type (other types: 1). Pods, nodes, events and BindRequests are read row by
 * row through the database client and resolved field by field, so a row of them keeps the event
 * loop far longer than a job row (resolved from one row read with its page); weighed so,
 * a query at the cost limit holds the event loop only briefly at a stretch (docs/benchmarks.md,
 * `bench:api-query-weight`).
 */
export const ROW_WEIGHTS: Readonly<Record<string, number>> = {
  Pod: 10,
  Node: 10,
  Event: 10,
  BindRequest: 10,
};

/** The fleet's size, for the lists whose length is the fleet's (updated by the API server). */
export interface FleetSize {
  clusters: number;
  /** Nodes of the largest cluster. */
  largestCluster: number;
}

/** Until the API has read the fleet's size: a fleet of 10 clusters of 100 nodes. */
export const DEFAULT_FLEET_SIZE: FleetSize = { clusters: 10, largestCluster: 100 };

/** Lists without `first` (queues, a job's tasks…): their length is not known before they are
 * read. */
const UNBOUNDED_LIST_ESTIMATE = 10;
const listEstimate = (key: string, fleet: FleetSize): number =>
  key === "Query.clusters"
    ? fleet.clusters
    : key === "Cluster.nodes"
      ? fleet.largestCluster
      : key === "Query.queueShareHistory"
        ? MAX_SHARE_SAMPLES
        : UNBOUNDED_LIST_ESTIMATE;

/** Lists that return one item per element of one of their arguments: counted by its length. */
const ONE_PER_ARGUMENT: Record<string, string> = {
  "Mutation.submitJobs": "inputs",
  "Query.dryRunSubmitJobs": "inputs",
  "Query.dryRunSubmitWorkloads": "inputs",
};

/** The length of the list argument `name` as sent (written in the query or a variable), or null. */
function argumentLength(node: FieldNode, name: string, walk: Walk): number | null {
  const arg = node.arguments?.find((a) => a.name.value === name);
  if (!arg) return null;
  const value = arg.value.kind === Kind.VARIABLE ? walk.variables[arg.value.name.value] : null;
  if (Array.isArray(value)) return value.length;
  return arg.value.kind === Kind.LIST ? arg.value.values.length : null;
}

/** Work a field does per call beyond the rows it returns. */
const FIELD_COSTS: Record<string, number> = {
  "Query.fairShare": 500,
  "Query.usageReport": 500,
  "Query.clusterScenario": 500,
  "Query.whatIf": 500,
  // Admission's decision and a simulated cluster or three: a whatIf's work at least.
  "Query.dryRunSubmit": 500,
  "Query.dryRunSubmitJobs": 500,
  "Query.dryRunSubmitWorkload": 500,
  "Query.dryRunSubmitWorkloads": 500,
  // Validated like a submit, rendered pod by pod.
  "Query.renderJob": 100,
  // A round trip to the cluster's agent, which reads the log from its cluster.
  "Query.podLogs": 100,
};

/** Fields whose arguments carry pod templates or manifests: they cost a point per KiB of their
 * arguments as sent, so that a token's budget counts the bytes it has the API parse, check and
 * store (a 256 KiB template costs 256). */
const WEIGHED_ARGUMENTS = new Set([
  "Mutation.submitJob",
  "Mutation.submitJobs",
  "Mutation.submitWorkload",
  "Mutation.submitWorkloads",
  "Query.renderJob",
  "Query.dryRunSubmit",
  "Query.dryRunSubmitJobs",
  "Query.dryRunSubmitWorkload",
  "Query.dryRunSubmitWorkloads",
]);
export const BYTES_PER_POINT = 1024;

type Variables = Record<string, unknown>;

const jsonBytes = (v: unknown): number =>
  v === undefined ? 0 : Buffer.byteLength(JSON.stringify(v) ?? "", "utf8");

/** An argument's size as sent: its text in the query, and the variables it names, as JSON. */
function valueBytes(value: ValueNode, walk: Walk): number {
  if (value.kind === Kind.VARIABLE) return jsonBytes(walk.variables[value.name.value]);
  if (value.kind === Kind.LIST) return value.values.reduce((n, v) => n + valueBytes(v, walk), 2);
  if (value.kind === Kind.OBJECT)
    return value.fields.reduce((n, f) => n + f.name.value.length + 2 + valueBytes(f.value, walk), 2);
  return value.loc ? value.loc.end - value.loc.start : 8;
}

function bytesCost(key: string, node: FieldNode, walk: Walk): number {
  if (!WEIGHED_ARGUMENTS.has(key)) return 0;
  const bytes = (node.arguments ?? []).reduce((n, a) => n + valueBytes(a.value, walk), 0);
  return Math.ceil(bytes / BYTES_PER_POINT);
}

interface Walk {
  schema: GraphQLSchema;
  fragments: Map<string, FragmentDefinitionNode>;
  variables: Variables;
  /** Fragments being expanded (a cycle is a validation error; never loop on one). */
  open: Set<string>;
  fleet: FleetSize;
}

function firstOf(field: GraphQLField<unknown, unknown>, node: FieldNode, walk: Walk): number | null {
  const def = field.args.find((a) => a.name === "first");
  if (!def) return null;
  const arg = node.arguments?.find((a) => a.name.value === "first");
  let value: unknown = def.defaultValue;
  if (arg) {
    value =
      arg.value.kind === Kind.VARIABLE
        ? (walk.variables[arg.value.name.value] ?? def.defaultValue)
        : valueFromAST(arg.value, def.type, walk.variables);
  }
  if (value === undefined || value === null) return null; // no page size: the list's estimate
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}

function fieldCost(parent: GraphQLNamedType, node: FieldNode, walk: Walk): number {
  if (!isObjectType(parent) && !isInterfaceType(parent)) return 0;
  const field = parent.getFields()[node.name.value];
  if (!field) return 0; // __typename and the like
  const key = `${parent.name}.${field.name}`;
  const own = (FIELD_COSTS[key] ?? 0) + bytesCost(key, node, walk);
  if (!node.selectionSet) return own; // scalars come with their row
  const type = getNamedType(field.type);
  const children = selectionCost(type, node.selectionSet, walk);
  const perArgument = ONE_PER_ARGUMENT[key];
  const first = (perArgument ? argumentLength(node, perArgument, walk) : null) ?? firstOf(field, node, walk);
  const isList = isListType(getNullableType(field.type));
  // A connection's page is counted once, where `first` is; its edges are that page.
  const multiplier =
    first ?? (isList && !parent.name.endsWith("Connection") ? listEstimate(key, walk.fleet) : 1);
  return own + multiplier * ((ROW_WEIGHTS[type.name] ?? 1) + children);
}

function selectionCost(type: GraphQLNamedType, set: SelectionSetNode, walk: Walk): number {
  let cost = 0;
  for (const s of set.selections) {
    if (s.kind === Kind.FIELD) cost += fieldCost(type, s, walk);
    else if (s.kind === Kind.INLINE_FRAGMENT) {
      const on = s.typeCondition ? (walk.schema.getType(s.typeCondition.name.value) ?? type) : type;
      cost += selectionCost(on, s.selectionSet, walk);
    } else {
      const fragment = walk.fragments.get(s.name.value);
      if (!fragment || walk.open.has(s.name.value)) continue;
      walk.open.add(s.name.value);
      cost += selectionCost(
        walk.schema.getType(fragment.typeCondition.name.value) ?? type,
        fragment.selectionSet,
        walk,
      );
      walk.open.delete(s.name.value);
    }
  }
  return cost;
}

/** The cost of the operation the request runs (the named one, or the only one). */
export function operationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Variables | null | undefined,
  fleet: FleetSize = DEFAULT_FLEET_SIZE,
): number {
  const operations = document.definitions.filter(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  );
  const operation = operationName ? operations.find((o) => o.name?.value === operationName) : operations[0];
  if (!operation) return 0;
  const root =
    operation.operation === "query"
      ? schema.getQueryType()
      : operation.operation === "mutation"
        ? schema.getMutationType()
        : schema.getSubscriptionType();
  if (!root) return 0;
  const values: Variables = {};
  for (const v of operation.variableDefinitions ?? []) {
    const given = variables?.[v.variable.name.value];
    values[v.variable.name.value] =
      given !== undefined && given !== null
        ? given
        : v.defaultValue
          ? valueFromASTUntyped(v.defaultValue)
          : given;
  }
  const fragments = new Map(
    document.definitions
      .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
      .map((f) => [f.name.value, f]),
  );
  return selectionCost(root, operation.selectionSet, {
    schema,
    fragments,
    variables: values,
    open: new Set(),
    fleet,
  });
}

const WEIGHTS_TEXT = Object.entries(ROW_WEIGHTS)
  .map(([type, weight]) => `a ${type} row ${weight}`)
  .join(", ");

export function tooCostly(cost: number): GraphQLError {
  return new GraphQLError(
    `Query cost limit of ${MAX_QUERY_COST} exceeded, found ${cost} (a list counts its page size, \`first\`, times what it selects, ${WEIGHTS_TEXT}; ask for smaller pages)`,
    { extensions: { code: "GRAPHQL_VALIDATION_FAILED", http: { status: 400 } } },
  );
}

/** The operation's cost, or the error when it is above the limit. */
export function checkedCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Variables | null | undefined,
  fleet?: FleetSize,
): { cost: number; refusal: GraphQLError | null } {
  const cost = operationCost(schema, document, operationName, variables, fleet);
  return { cost, refusal: cost > MAX_QUERY_COST ? tooCostly(cost) : null };
}
