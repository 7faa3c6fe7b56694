// Every plugin the core knows, by name. A configuration names plugins from here; a
// custom plugin is added by registering its factory (see docs/plugins.md).
import type { PluginArguments } from "../framework/config.js";
import type { Plugin } from "../framework/session.js";
import * as dynamicresources from "./dynamicresources/index.js";
import * as elastic from "./elastic/index.js";
import * as gpumodelpreference from "./gpumodelpreference/index.js";
import * as gpupack from "./gpupack/index.js";
import * as gpusharingorder from "./gpusharingorder/index.js";
import * as gpuspread from "./gpuspread/index.js";
import * as kubeflow from "./kubeflow/index.js";
import * as minruntime from "./minruntime/index.js";
import * as nodeavailability from "./nodeavailability/index.js";
import * as nodeplacement from "./nodeplacement/index.js";
import * as nominatednode from "./nominatednode/index.js";
import * as predicates from "./predicates/index.js";
import * as priority from "./priority/index.js";
import * as proportion from "./proportion/index.js";
import * as ray from "./ray/index.js";
import * as resourcetype from "./resourcetype/index.js";
import * as snapshot from "./snapshot/index.js";
import * as subgrouporder from "./subgrouporder/index.js";
import * as taskorder from "./taskorder/index.js";
import * as topology from "./topology/index.js";

export type PluginFactory = (args: PluginArguments) => Plugin;

export class PluginRegistry {
  private readonly factories = new Map<string, PluginFactory>();

  register(name: string, factory: PluginFactory): this {
    this.factories.set(name, factory);
    return this;
  }

  has(name: string): boolean {
    return this.factories.has(name);
  }

  names(): Set<string> {
    return new Set(this.factories.keys());
  }

  create(name: string, args: PluginArguments = {}): Plugin {
    const f = this.factories.get(name);
    if (!f) throw new Error(`unknown plugin ${name} (known: ${[...this.factories.keys()].join(", ")})`);
    return f(args);
  }
}

const BUILT_IN: { name: string; create: PluginFactory }[] = [
  predicates,
  proportion,
  priority,
  elastic,
  kubeflow,
  ray,
  nodeavailability,
  gpusharingorder,
  gpupack,
  gpuspread,
  resourcetype,
  subgrouporder,
  taskorder,
  nominatednode,
  dynamicresources,
  nodeplacement,
  minruntime,
  topology,
  snapshot,
  gpumodelpreference,
];

/** A registry holding the built-in plugins. */
export function defaultPluginRegistry(): PluginRegistry {
  const r = new PluginRegistry();
  for (const p of BUILT_IN) r.register(p.name, p.create);
  return r;
}
