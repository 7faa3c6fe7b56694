// Which of a module's exports have a type that mentions one declared in given files: the
// TypeScript checker over the project (tsconfig.json), through the compiler's API. A type is
// followed through what a caller can reach: properties, call and construct signatures
// (parameters and results), index signatures, type arguments, union and intersection members,
// type parameters' constraints. Types declared outside the project (node_modules, the standard
// library) are matched but not entered, except for their type arguments (Promise<T>, T[]).
import path from "node:path";
import {
  API,
  type Checker,
  type Project,
  type Signature,
  SignatureKind,
  SymbolFlags,
  type Symbol as TsSymbol,
  type Type,
} from "typescript/unstable/sync";

/** The project's checker, open until `close()`. */
export function openProject(root: string): { project: Project; close(): void } {
  const api = new API({ cwd: root });
  const project = api.updateSnapshot({ openProject: path.join(root, "tsconfig.json") }).getProjects()[0];
  if (!project) throw new Error(`no project for ${root}/tsconfig.json`);
  return { project, close: () => api.close() };
}

const declaredIn = (s: TsSymbol | undefined): string[] => s?.declarations.map((d) => d.path as string) ?? [];

/** Each place (`name.property(parameter)…`) where the types of `file`'s exports reach a type
 * declared in a file `banned` accepts, with that type as the checker prints it. */
export function exportsMentioning(
  project: Project,
  file: string,
  banned: (declaredIn: string) => boolean,
  own: (declaredIn: string) => boolean,
): string[] {
  const { checker } = project;
  const source = project.program.getSourceFile(file);
  const module = source && checker.getSymbolAtLocation(source);
  if (!module) throw new Error(`${file} is not a module of the project`);
  const found: string[] = [];
  for (const e of checker.getExportsOfModule(module)) {
    const s = e.flags & SymbolFlags.Alias ? checker.getAliasedSymbol(e) : e;
    const walk = walker(checker, banned, own, found);
    const value = s.flags & SymbolFlags.Value ? checker.getTypeOfSymbol(s) : undefined;
    if (value) walk(value, e.name);
    if (s.flags & SymbolFlags.Type) walk(checker.getDeclaredTypeOfSymbol(s), e.name);
  }
  return found;
}

function walker(
  checker: Checker,
  banned: (file: string) => boolean,
  own: (file: string) => boolean,
  found: string[],
): (t: Type, at: string) => void {
  const seen = new Set<number>();
  const walk = (t: Type, at: string): void => {
    if (seen.has(t.id)) return;
    seen.add(t.id);
    const files = [...declaredIn(t.getSymbol()), ...declaredIn(t.getAliasSymbol())];
    if (files.some(banned)) {
      found.push(`${at}: ${checker.typeToString(t)}`);
      return;
    }
    for (const a of t.getAliasTypeArguments()) walk(a, at);
    if (t.isTypeReference()) for (const a of checker.getTypeArguments(t)) walk(a, at);
    if (t.isUnionType() || t.isIntersectionType()) for (const m of t.getTypes() ?? []) walk(m, at);
    if (t.isTypeParameter()) {
      const c = checker.getConstraintOfTypeParameter(t);
      if (c) walk(c, at);
    }
    if (t.isObjectType() && (files.length === 0 || files.some(own))) members(checker, t, at, walk);
  };
  return walk;
}

function members(checker: Checker, t: Type, at: string, walk: (t: Type, at: string) => void): void {
  for (const p of checker.getPropertiesOfType(t)) {
    const pt = checker.getTypeOfSymbol(p);
    if (pt) walk(pt, `${at}.${p.name}`);
  }
  for (const kind of [SignatureKind.Call, SignatureKind.Construct])
    for (const s of checker.getSignaturesOfType(t, kind)) signature(checker, s, at, walk);
  for (const i of checker.getIndexInfosOfType(t)) walk(i.valueType, `${at}[]`);
}

function signature(checker: Checker, s: Signature, at: string, walk: (t: Type, at: string) => void): void {
  for (const tp of s.getTypeParameters()) walk(tp, `${at}<${checker.typeToString(tp)}>`);
  for (const p of s.getParameters()) {
    const pt = checker.getTypeOfSymbol(p);
    if (pt) walk(pt, `${at}(${p.name})`);
  }
  const r = checker.getReturnTypeOfSignature(s);
  if (r) walk(r, `${at}()`);
}
