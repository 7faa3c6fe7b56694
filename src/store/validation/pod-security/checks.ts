// The controls of the Kubernetes Pod Security Standards (kubernetes.io/docs/concepts/security/
// pod-security-standards), Baseline and Restricted, each at its version of Kubernetes v1.37 (the
// policy version "latest" means on a v1.37 API server), one function per control. Each returns
// the first field that breaks it, with the path inside the template and why.
import { type ContainerAt, isSetTrue, isWindows, list, obj, type Path, type PodView } from "./template.js";

export interface Violation {
  /** The control, as the standard names it. */
  control: string;
  path: Path;
  message: string;
}

export type Check = (pod: PodView) => Violation | null;

const at = (control: string, path: Path, message: string): Violation => ({ control, path, message });

/** Capabilities Baseline lets a container add (the container runtime's defaults). */
export const BASELINE_CAPABILITIES = new Set([
  "AUDIT_WRITE",
  "CHOWN",
  "DAC_OVERRIDE",
  "FOWNER",
  "FSETID",
  "KILL",
  "MKNOD",
  "NET_BIND_SERVICE",
  "SETFCAP",
  "SETGID",
  "SETPCAP",
  "SETUID",
  "SYS_CHROOT",
]);

/** The safe sysctls (namespaced, isolated from the node and other pods), as of v1.37. */
export const SAFE_SYSCTLS = new Set([
  "kernel.shm_rmid_forced",
  "net.ipv4.ip_local_port_range",
  "net.ipv4.ip_unprivileged_port_start",
  "net.ipv4.tcp_syncookies",
  "net.ipv4.ping_group_range",
  // v1.27
  "net.ipv4.ip_local_reserved_ports",
  // v1.29
  "net.ipv4.tcp_keepalive_time",
  "net.ipv4.tcp_fin_timeout",
  "net.ipv4.tcp_keepalive_intvl",
  "net.ipv4.tcp_keepalive_probes",
  // v1.32
  "net.ipv4.tcp_rmem",
  "net.ipv4.tcp_wmem",
  // v1.37
  "net.ipv4.tcp_slow_start_after_idle",
  "net.ipv4.tcp_notsent_lowat",
]);

export const SELINUX_TYPES = new Set([
  "",
  "container_t",
  "container_init_t",
  "container_kvm_t",
  "container_engine_t",
]);

/** Volume sources Restricted allows. */
export const RESTRICTED_VOLUME_SOURCES = new Set([
  "configMap",
  "csi",
  "downwardAPI",
  "emptyDir",
  "ephemeral",
  "image",
  "persistentVolumeClaim",
  "projected",
  "secret",
]);

const APPARMOR_ANNOTATION = "container.apparmor.security.beta.kubernetes.io/";
const SECCOMP_TYPES = new Set(["RuntimeDefault", "Localhost"]);

const podSecurityContext = (pod: PodView) => obj(pod.spec.securityContext);
const podSecurityContextPath = (pod: PodView): Path => [...pod.specPath, "securityContext"];
const securityContext = (c: ContainerAt) => obj(c.container.securityContext);
const securityContextPath = (c: ContainerAt): Path => [...c.path, "securityContext"];

/** Every security context of the pod (the pod's, then each container's) with its path. */
function securityContexts(pod: PodView): { sc: Record<string, unknown>; path: Path }[] {
  return [
    { sc: podSecurityContext(pod), path: podSecurityContextPath(pod) },
    ...pod.containers.map((c) => ({ sc: securityContext(c), path: securityContextPath(c) })),
  ];
}

/** A pod in a user namespace (hostUsers: false): root in its containers is not root on the node,
 * so Baseline lets it unmask /proc and Restricted does not require non-root users (v1.35). */
const inUserNamespace = (pod: PodView): boolean => pod.spec.hostUsers === false;

function firstOf<T>(items: readonly T[], f: (item: T) => Violation | null): Violation | null {
  for (const item of items) {
    const v = f(item);
    if (v) return v;
  }
  return null;
}

// ---- Baseline ----

export const hostProcess: Check = (pod) =>
  firstOf(securityContexts(pod), ({ sc, path }) =>
    isSetTrue(obj(sc.windowsOptions).hostProcess)
      ? at(
          "HostProcess",
          [...path, "windowsOptions", "hostProcess"],
          "Windows HostProcess containers are not allowed",
        )
      : null,
  );

export const hostNamespaces: Check = (pod) =>
  firstOf(["hostNetwork", "hostPID", "hostIPC"] as const, (f) =>
    isSetTrue(pod.spec[f])
      ? at("Host Namespaces", [...pod.specPath, f], `sharing the host's namespaces (${f}) is not allowed`)
      : null,
  );

export const privileged: Check = (pod) =>
  firstOf(pod.containers, (c) =>
    isSetTrue(securityContext(c).privileged)
      ? at(
          "Privileged Containers",
          [...securityContextPath(c), "privileged"],
          "privileged containers are not allowed",
        )
      : null,
  );

export const baselineCapabilities: Check = (pod) =>
  firstOf(pod.containers, (c) => {
    const added = list(obj(securityContext(c).capabilities).add);
    const i = added.findIndex((cap) => typeof cap !== "string" || !BASELINE_CAPABILITIES.has(cap));
    return i < 0
      ? null
      : at(
          "Capabilities",
          [...securityContextPath(c), "capabilities", "add", i],
          `adding capability ${JSON.stringify(added[i])} is not allowed (only ${[...BASELINE_CAPABILITIES].join(", ")})`,
        );
  });

export const hostPathVolumes: Check = (pod) =>
  firstOf(
    list(pod.spec.volumes).map((v, i) => ({ v: obj(v), i })),
    ({ v, i }) =>
      v.hostPath !== undefined && v.hostPath !== null
        ? at(
            "HostPath Volumes",
            [...pod.specPath, "volumes", i, "hostPath"],
            "hostPath volumes are not allowed",
          )
        : null,
  );

export const hostPorts: Check = (pod) =>
  firstOf(pod.containers, (c) => {
    const ports = list(c.container.ports);
    const i = ports.findIndex((p) => {
      const hostPort = obj(p).hostPort;
      return hostPort !== undefined && hostPort !== null && hostPort !== 0;
    });
    return i < 0 ? null : at("Host Ports", [...c.path, "ports", i, "hostPort"], "host ports are not allowed");
  });

const PROBES = ["livenessProbe", "readinessProbe", "startupProbe"] as const;
const HANDLERS = ["postStart", "preStop"] as const;

/** Baseline (v1.34): probes and lifecycle handlers reach their own container only; a host there
 * would make the kubelet, on the node's network, call any address for the pod. */
export const hostProbesAndLifecycle: Check = (pod) =>
  firstOf(pod.containers, (c) => {
    const handlers: { handler: unknown; path: Path }[] = [
      ...PROBES.map((p) => ({ handler: c.container[p], path: [...c.path, p] })),
      ...HANDLERS.map((h) => ({ handler: obj(c.container.lifecycle)[h], path: [...c.path, "lifecycle", h] })),
    ];
    for (const { handler, path } of handlers)
      for (const kind of ["httpGet", "tcpSocket"] as const) {
        const host = obj(obj(handler)[kind]).host;
        if (host !== undefined && host !== null && host !== "")
          return at(
            "Host Probes / Lifecycle Hooks",
            [...path, kind, "host"],
            "a host in a probe or lifecycle handler is not allowed (it checks the container itself)",
          );
      }
    return null;
  });

const APPARMOR_TYPES = new Set(["RuntimeDefault", "Localhost"]);

export const appArmor: Check = (pod) => {
  const annotations = obj(pod.metadata.annotations);
  for (const [key, value] of Object.entries(annotations)) {
    if (!key.startsWith(APPARMOR_ANNOTATION)) continue;
    if (
      value === "" ||
      value === "runtime/default" ||
      (typeof value === "string" && value.startsWith("localhost/"))
    )
      continue;
    return at(
      "AppArmor",
      [...pod.metadataPath, "annotations", key],
      "an AppArmor profile other than runtime/default or localhost/* is not allowed",
    );
  }
  return firstOf(securityContexts(pod), ({ sc, path }) => {
    const type = obj(sc.appArmorProfile).type;
    return type === undefined || type === null || (typeof type === "string" && APPARMOR_TYPES.has(type))
      ? null
      : at(
          "AppArmor",
          [...path, "appArmorProfile", "type"],
          "the AppArmor profile must be RuntimeDefault or Localhost",
        );
  });
};

export const seLinux: Check = (pod) =>
  firstOf(securityContexts(pod), ({ sc, path }) => {
    const options = obj(sc.seLinuxOptions);
    const base = [...path, "seLinuxOptions"];
    const type = options.type;
    if (type !== undefined && type !== null && !(typeof type === "string" && SELINUX_TYPES.has(type)))
      return at(
        "SELinux",
        [...base, "type"],
        `SELinux type ${JSON.stringify(type)} is not allowed (only ${[...SELINUX_TYPES].filter(Boolean).join(", ")})`,
      );
    for (const f of ["user", "role"] as const) {
      const v = options[f];
      if (v !== undefined && v !== null && v !== "")
        return at("SELinux", [...base, f], `setting a custom SELinux ${f} is not allowed`);
    }
    return null;
  });

/** Restricted: only the Default /proc mount type, user namespace or not. */
export const procMountRestricted: Check = (pod) =>
  firstOf(pod.containers, (c) => {
    const v = securityContext(c).procMount;
    return v === undefined || v === null || v === "Default"
      ? null
      : at(
          "/proc Mount Type",
          [...securityContextPath(c), "procMount"],
          "only the Default /proc mount type is allowed",
        );
  });

/** Baseline: the Default /proc mount type, unless the pod is in a user namespace. */
export const procMount: Check = (pod) => (inUserNamespace(pod) ? null : procMountRestricted(pod));

/** Baseline: a seccomp profile, where set, is RuntimeDefault or Localhost (never Unconfined). */
export const seccompNotUnconfined: Check = (pod) =>
  firstOf(securityContexts(pod), ({ sc, path }) => {
    const type = obj(sc.seccompProfile).type;
    return type === undefined || type === null || SECCOMP_TYPES.has(type as string)
      ? null
      : at(
          "Seccomp",
          [...path, "seccompProfile", "type"],
          `seccomp profile ${JSON.stringify(type)} is not allowed (RuntimeDefault or Localhost)`,
        );
  });

export const sysctls: Check = (pod) => {
  const all = list(podSecurityContext(pod).sysctls);
  const i = all.findIndex((s) => {
    const name = obj(s).name;
    return typeof name !== "string" || !SAFE_SYSCTLS.has(name);
  });
  return i < 0
    ? null
    : at(
        "Sysctls",
        [...podSecurityContextPath(pod), "sysctls", i, "name"],
        `sysctl ${JSON.stringify(obj(all[i]).name)} is not allowed (only the safe set: ${[...SAFE_SYSCTLS].join(", ")})`,
      );
};

// ---- Restricted (in addition to Baseline) ----

export const volumeTypes: Check = (pod) =>
  firstOf(
    list(pod.spec.volumes).map((v, i) => ({ v: obj(v), i })),
    ({ v, i }) => {
      const source = Object.keys(v).find(
        (k) => k !== "name" && v[k] !== null && !RESTRICTED_VOLUME_SOURCES.has(k),
      );
      return source === undefined
        ? null
        : at(
            "Volume Types",
            [...pod.specPath, "volumes", i, source],
            `${source} volumes are not allowed (only ${[...RESTRICTED_VOLUME_SOURCES].join(", ")})`,
          );
    },
  );

export const privilegeEscalation: Check = (pod) =>
  isWindows(pod)
    ? null
    : firstOf(pod.containers, (c) =>
        securityContext(c).allowPrivilegeEscalation === false
          ? null
          : at(
              "Privilege Escalation",
              [...securityContextPath(c), "allowPrivilegeEscalation"],
              "allowPrivilegeEscalation must be false",
            ),
      );

export const runAsNonRoot: Check = (pod) => {
  if (inUserNamespace(pod)) return null;
  const podLevel = podSecurityContext(pod).runAsNonRoot;
  if (podLevel !== undefined && podLevel !== null && podLevel !== true)
    return at(
      "Running as Non-root",
      [...podSecurityContextPath(pod), "runAsNonRoot"],
      "runAsNonRoot must be true",
    );
  return firstOf(pod.containers, (c) => {
    const v = securityContext(c).runAsNonRoot;
    if (v === true || ((v === undefined || v === null) && podLevel === true)) return null;
    return at(
      "Running as Non-root",
      [...securityContextPath(c), "runAsNonRoot"],
      "runAsNonRoot must be true (on the pod's or every container's securityContext)",
    );
  });
};

export const runAsNonRootUser: Check = (pod) =>
  inUserNamespace(pod)
    ? null
    : firstOf(securityContexts(pod), ({ sc, path }) =>
        sc.runAsUser === 0
          ? at("Running as Non-root user", [...path, "runAsUser"], "runAsUser must not be 0 (root)")
          : null,
      );

export const seccompRequired: Check = (pod) => {
  if (isWindows(pod)) return null;
  const podType = obj(podSecurityContext(pod).seccompProfile).type;
  const podPath = [...podSecurityContextPath(pod), "seccompProfile", "type"];
  if (podType !== undefined && podType !== null && !SECCOMP_TYPES.has(podType as string))
    return at("Seccomp", podPath, "the seccomp profile must be RuntimeDefault or Localhost");
  return firstOf(pod.containers, (c) => {
    const type = obj(securityContext(c).seccompProfile).type;
    if (type === undefined || type === null) {
      return podType
        ? null
        : at(
            "Seccomp",
            [...securityContextPath(c), "seccompProfile", "type"],
            "a seccomp profile (RuntimeDefault or Localhost) must be set on the pod or every container",
          );
    }
    return SECCOMP_TYPES.has(type as string)
      ? null
      : at(
          "Seccomp",
          [...securityContextPath(c), "seccompProfile", "type"],
          "the seccomp profile must be RuntimeDefault or Localhost",
        );
  });
};

export const restrictedCapabilities: Check = (pod) =>
  isWindows(pod)
    ? null
    : firstOf(pod.containers, (c) => {
        const caps = obj(securityContext(c).capabilities);
        const base = [...securityContextPath(c), "capabilities"];
        if (!list(caps.drop).includes("ALL"))
          return at(
            "Capabilities",
            [...base, "drop"],
            'containers must drop ALL capabilities (capabilities.drop: ["ALL"])',
          );
        const added = list(caps.add);
        const i = added.findIndex((cap) => cap !== "NET_BIND_SERVICE");
        return i < 0
          ? null
          : at(
              "Capabilities",
              [...base, "add", i],
              "only NET_BIND_SERVICE may be added to a restricted container",
            );
      });

export const BASELINE_CHECKS: readonly Check[] = [
  hostProcess,
  hostNamespaces,
  privileged,
  baselineCapabilities,
  hostPathVolumes,
  hostPorts,
  hostProbesAndLifecycle,
  appArmor,
  seLinux,
  procMount,
  seccompNotUnconfined,
  sysctls,
];

/** Restricted controls that take a Baseline control's place (as the standard defines Restricted:
 * Baseline, less these, plus the Restricted controls). On Windows pods, the Restricted versions
 * of seccomp and capabilities judge nothing. */
const REPLACED_IN_RESTRICTED = new Map<Check, Check>([
  [hostPathVolumes, volumeTypes],
  [baselineCapabilities, restrictedCapabilities],
  [seccompNotUnconfined, seccompRequired],
  [procMount, procMountRestricted],
]);

export const RESTRICTED_CHECKS: readonly Check[] = [
  ...BASELINE_CHECKS.map((c) => REPLACED_IN_RESTRICTED.get(c) ?? c),
  privilegeEscalation,
  runAsNonRoot,
  runAsNonRootUser,
];
