// The Pod Security Standards' controls, one table per control: what each level allows and what
// it refuses, with the field named.
import { describe, expect, it } from "vitest";
import { formatPath } from "../../src/store/validation/parse.js";
import {
  type PodSecurityLevel,
  podSecurityViolation,
} from "../../src/store/validation/pod-security/index.js";

type Json = Record<string, unknown>;

/** A pod that passes Restricted: every control is then broken by one change at a time. */
const restrictedContainer = (extra: Json = {}): Json => ({
  name: "main",
  image: "busybox",
  securityContext: {
    allowPrivilegeEscalation: false,
    capabilities: { drop: ["ALL"] },
    ...((extra.securityContext as Json | undefined) ?? {}),
  },
  ...Object.fromEntries(Object.entries(extra).filter(([k]) => k !== "securityContext")),
});

const pod = (spec: Json = {}, container: Json = {}, metadata: Json = {}): Json => ({
  metadata,
  spec: {
    securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
    containers: [restrictedContainer(container)],
    ...spec,
  },
});

const podSc = (sc: Json) => ({
  securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" }, ...sc },
});

interface Case {
  name: string;
  template: unknown;
  /** The lowest level that refuses it (null: every level allows it), and the field named. */
  refusedFrom: "BASELINE" | "RESTRICTED" | null;
  field?: string;
  /** The levels that refuse it, where that is not "from one level up" (Windows pods). */
  refusedAt?: PodSecurityLevel[];
}

const LEVELS: PodSecurityLevel[] = ["PRIVILEGED", "BASELINE", "RESTRICTED"];

function runTable(cases: Case[]) {
  for (const c of cases) {
    for (const level of LEVELS) {
      const refused = c.refusedAt
        ? c.refusedAt.includes(level)
        : c.refusedFrom !== null &&
          (level === "RESTRICTED" || (level === "BASELINE" && c.refusedFrom === "BASELINE"));
      it(`${c.name} — ${level}: ${refused ? "refused" : "allowed"}`, () => {
        const v = podSecurityViolation(c.template, level);
        if (!refused) expect(v).toBeNull();
        else {
          expect(v).not.toBeNull();
          expect(formatPath(v!.path)).toBe(c.field);
        }
      });
    }
  }
}

describe("pod security: the restricted pod itself", () => {
  runTable([
    { name: "a pod following every restricted control", template: pod(), refusedFrom: null },
    { name: "no template (simulated clusters)", template: null, refusedFrom: null },
  ]);
  it("a bare PodSpec is judged like a Pod, paths without spec.", () => {
    const v = podSecurityViolation({ hostPID: true, containers: [{ name: "a" }] }, "BASELINE");
    expect(formatPath(v!.path)).toBe("hostPID");
  });
  it("a template that is not an object is refused", () => {
    expect(podSecurityViolation("privileged", "BASELINE")?.control).toBe("Template");
  });
});

describe("pod security: HostProcess", () => {
  runTable([
    {
      name: "pod hostProcess",
      template: pod(podSc({ windowsOptions: { hostProcess: true } })),
      refusedFrom: "BASELINE",
      field: "spec.securityContext.windowsOptions.hostProcess",
    },
    {
      name: "container hostProcess",
      template: pod({}, { securityContext: { windowsOptions: { hostProcess: true } } }),
      refusedFrom: "BASELINE",
      field: "spec.containers[0].securityContext.windowsOptions.hostProcess",
    },
    {
      name: "hostProcess false",
      template: pod(podSc({ windowsOptions: { hostProcess: false } })),
      refusedFrom: null,
    },
  ]);
});

describe("pod security: host namespaces", () => {
  runTable([
    {
      name: "hostNetwork",
      template: pod({ hostNetwork: true }),
      refusedFrom: "BASELINE",
      field: "spec.hostNetwork",
    },
    { name: "hostPID", template: pod({ hostPID: true }), refusedFrom: "BASELINE", field: "spec.hostPID" },
    { name: "hostIPC", template: pod({ hostIPC: true }), refusedFrom: "BASELINE", field: "spec.hostIPC" },
    { name: "hostNetwork false", template: pod({ hostNetwork: false }), refusedFrom: null },
  ]);
});

describe("pod security: privileged containers", () => {
  runTable([
    {
      name: "privileged container",
      template: pod({}, { securityContext: { privileged: true } }),
      refusedFrom: "BASELINE",
      field: "spec.containers[0].securityContext.privileged",
    },
    {
      name: "privileged init container",
      template: pod({ initContainers: [restrictedContainer({ securityContext: { privileged: true } })] }),
      refusedFrom: "BASELINE",
      field: "spec.initContainers[0].securityContext.privileged",
    },
    {
      name: "privileged ephemeral container",
      template: pod({
        ephemeralContainers: [restrictedContainer({ securityContext: { privileged: true } })],
      }),
      refusedFrom: "BASELINE",
      field: "spec.ephemeralContainers[0].securityContext.privileged",
    },
    {
      name: "privileged false",
      template: pod({}, { securityContext: { privileged: false } }),
      refusedFrom: null,
    },
  ]);
});

describe("pod security: capabilities", () => {
  runTable([
    {
      name: "add SYS_ADMIN",
      template: pod({}, { securityContext: { capabilities: { drop: ["ALL"], add: ["SYS_ADMIN"] } } }),
      refusedFrom: "BASELINE",
      field: "spec.containers[0].securityContext.capabilities.add[0]",
    },
    {
      name: "add CHOWN (a runtime default)",
      template: pod({}, { securityContext: { capabilities: { drop: ["ALL"], add: ["CHOWN"] } } }),
      refusedFrom: "RESTRICTED",
      field: "spec.containers[0].securityContext.capabilities.add[0]",
    },
    {
      name: "add NET_BIND_SERVICE",
      template: pod({}, { securityContext: { capabilities: { drop: ["ALL"], add: ["NET_BIND_SERVICE"] } } }),
      refusedFrom: null,
    },
    {
      name: "not dropping ALL",
      template: pod({}, { securityContext: { capabilities: { drop: ["NET_RAW"] } } }),
      refusedFrom: "RESTRICTED",
      field: "spec.containers[0].securityContext.capabilities.drop",
    },
  ]);
});

describe("pod security: hostPath volumes", () => {
  runTable([
    {
      name: "hostPath /",
      template: pod({
        volumes: [
          { name: "cache", emptyDir: {} },
          { name: "root", hostPath: { path: "/" } },
        ],
      }),
      refusedFrom: "BASELINE",
      field: "spec.volumes[1].hostPath",
    },
  ]);
});

describe("pod security: host ports", () => {
  runTable([
    {
      name: "hostPort 22",
      template: pod({}, { ports: [{ containerPort: 80 }, { containerPort: 22, hostPort: 22 }] }),
      refusedFrom: "BASELINE",
      field: "spec.containers[0].ports[1].hostPort",
    },
    {
      name: "hostPort 0",
      template: pod({}, { ports: [{ containerPort: 80, hostPort: 0 }] }),
      refusedFrom: null,
    },
  ]);
});

describe("pod security: AppArmor", () => {
  const annotation = "container.apparmor.security.beta.kubernetes.io/main";
  runTable([
    {
      name: "unconfined annotation",
      template: pod({}, {}, { annotations: { [annotation]: "unconfined" } }),
      refusedFrom: "BASELINE",
      field: `metadata.annotations["${annotation}"]`,
    },
    {
      name: "runtime/default annotation",
      template: pod({}, {}, { annotations: { [annotation]: "runtime/default" } }),
      refusedFrom: null,
    },
    {
      name: "appArmorProfile Unconfined",
      template: pod({}, { securityContext: { appArmorProfile: { type: "Unconfined" } } }),
      refusedFrom: "BASELINE",
      field: "spec.containers[0].securityContext.appArmorProfile.type",
    },
    {
      name: "appArmorProfile Localhost",
      template: pod(podSc({ appArmorProfile: { type: "Localhost" } })),
      refusedFrom: null,
    },
  ]);
});

describe("pod security: SELinux", () => {
  runTable([
    {
      name: "type spc_t",
      template: pod(podSc({ seLinuxOptions: { type: "spc_t" } })),
      refusedFrom: "BASELINE",
      field: "spec.securityContext.seLinuxOptions.type",
    },
    {
      name: "custom user",
      template: pod({}, { securityContext: { seLinuxOptions: { user: "system_u" } } }),
      refusedFrom: "BASELINE",
      field: "spec.containers[0].securityContext.seLinuxOptions.user",
    },
    {
      name: "custom role",
      template: pod({}, { securityContext: { seLinuxOptions: { role: "sysadm_r" } } }),
      refusedFrom: "BASELINE",
      field: "spec.containers[0].securityContext.seLinuxOptions.role",
    },
    {
      name: "type container_t, level set",
      template: pod(podSc({ seLinuxOptions: { type: "container_t", level: "s0:c1" } })),
      refusedFrom: null,
    },
  ]);
});

describe("pod security: /proc mount type", () => {
  runTable([
    {
      name: "procMount Unmasked",
      template: pod({}, { securityContext: { procMount: "Unmasked" } }),
      refusedFrom: "BASELINE",
      field: "spec.containers[0].securityContext.procMount",
    },
    {
      name: "procMount Default",
      template: pod({}, { securityContext: { procMount: "Default" } }),
      refusedFrom: null,
    },
  ]);
});

describe("pod security: seccomp", () => {
  runTable([
    {
      name: "pod Unconfined",
      template: pod(podSc({ seccompProfile: { type: "Unconfined" } })),
      refusedFrom: "BASELINE",
      field: "spec.securityContext.seccompProfile.type",
    },
    {
      name: "container Unconfined",
      template: pod({}, { securityContext: { seccompProfile: { type: "Unconfined" } } }),
      refusedFrom: "BASELINE",
      field: "spec.containers[0].securityContext.seccompProfile.type",
    },
    {
      name: "no profile anywhere",
      template: { spec: { securityContext: { runAsNonRoot: true }, containers: [restrictedContainer()] } },
      refusedFrom: "RESTRICTED",
      field: "spec.containers[0].securityContext.seccompProfile.type",
    },
    {
      name: "Localhost on every container",
      template: {
        spec: {
          securityContext: { runAsNonRoot: true },
          containers: [
            restrictedContainer({
              securityContext: { seccompProfile: { type: "Localhost", localhostProfile: "p.json" } },
            }),
          ],
        },
      },
      refusedFrom: null,
    },
  ]);
});

describe("pod security: sysctls", () => {
  runTable([
    {
      name: "unsafe sysctl",
      template: pod(
        podSc({
          sysctls: [
            { name: "net.ipv4.tcp_syncookies", value: "1" },
            { name: "kernel.msgmax", value: "1" },
          ],
        }),
      ),
      refusedFrom: "BASELINE",
      field: "spec.securityContext.sysctls[1].name",
    },
    {
      name: "safe sysctl",
      template: pod(podSc({ sysctls: [{ name: "net.ipv4.ip_local_port_range", value: "1024 65535" }] })),
      refusedFrom: null,
    },
  ]);
});

describe("pod security: volume types (restricted)", () => {
  runTable([
    {
      name: "nfs volume",
      template: pod({ volumes: [{ name: "data", nfs: { server: "s", path: "/" } }] }),
      refusedFrom: "RESTRICTED",
      field: "spec.volumes[0].nfs",
    },
    {
      name: "allowed volume sources",
      template: pod({
        volumes: [
          { name: "a", configMap: { name: "c" } },
          { name: "b", secret: { secretName: "s" } },
          { name: "c", emptyDir: {} },
          { name: "d", persistentVolumeClaim: { claimName: "x" } },
          { name: "e", projected: { sources: [] } },
          { name: "f", downwardAPI: {} },
          { name: "g", csi: { driver: "d" } },
          { name: "h", ephemeral: {} },
        ],
      }),
      refusedFrom: null,
    },
  ]);
});

describe("pod security: privilege escalation (restricted)", () => {
  runTable([
    {
      name: "allowPrivilegeEscalation unset",
      template: {
        spec: {
          ...podSc({}),
          containers: [{ name: "m", securityContext: { capabilities: { drop: ["ALL"] } } }],
        },
      },
      refusedFrom: "RESTRICTED",
      field: "spec.containers[0].securityContext.allowPrivilegeEscalation",
    },
    {
      name: "allowPrivilegeEscalation true",
      template: pod({}, { securityContext: { allowPrivilegeEscalation: true } }),
      refusedFrom: "RESTRICTED",
      field: "spec.containers[0].securityContext.allowPrivilegeEscalation",
    },
    {
      name: "Windows pods are exempt",
      template: pod({ os: { name: "windows" } }, { securityContext: { allowPrivilegeEscalation: true } }),
      refusedFrom: null,
    },
  ]);
});

describe("pod security: running as non-root (restricted)", () => {
  runTable([
    {
      name: "runAsNonRoot nowhere",
      template: pod({ securityContext: { seccompProfile: { type: "RuntimeDefault" } } }),
      refusedFrom: "RESTRICTED",
      field: "spec.containers[0].securityContext.runAsNonRoot",
    },
    {
      name: "pod runAsNonRoot false",
      template: pod(podSc({ runAsNonRoot: false })),
      refusedFrom: "RESTRICTED",
      field: "spec.securityContext.runAsNonRoot",
    },
    {
      name: "container overrides with false",
      template: pod({}, { securityContext: { runAsNonRoot: false } }),
      refusedFrom: "RESTRICTED",
      field: "spec.containers[0].securityContext.runAsNonRoot",
    },
    {
      name: "set on every container only",
      template: pod(
        { securityContext: { seccompProfile: { type: "RuntimeDefault" } } },
        { securityContext: { runAsNonRoot: true } },
      ),
      refusedFrom: null,
    },
    {
      name: "runAsUser 0",
      template: pod({}, { securityContext: { runAsUser: 0 } }),
      refusedFrom: "RESTRICTED",
      field: "spec.containers[0].securityContext.runAsUser",
    },
    { name: "runAsUser 1000", template: pod(podSc({ runAsUser: 1000 })), refusedFrom: null },
  ]);
});

describe("pod security: the API server's defaults pass Baseline", () => {
  it("a minimal pod is Baseline but not Restricted", () => {
    const minimal = { spec: { containers: [{ name: "main", image: "pytorch" }] } };
    expect(podSecurityViolation(minimal, "BASELINE")).toBeNull();
    expect(podSecurityViolation(minimal, "RESTRICTED")).not.toBeNull();
  });
});

// ---- Kubernetes v1.37: each control at its latest version ----

describe("pod security v1.37: host of probes and lifecycle handlers (baseline)", () => {
  const probe = (kind: "httpGet" | "tcpSocket", host: string) => ({ [kind]: { host, port: 8080 } });
  runTable([
    {
      name: "livenessProbe.httpGet.host",
      template: pod({}, { livenessProbe: probe("httpGet", "169.254.169.254") }),
      refusedFrom: "BASELINE",
      field: "spec.containers[0].livenessProbe.httpGet.host",
    },
    {
      name: "readinessProbe.tcpSocket.host",
      template: pod({}, { readinessProbe: probe("tcpSocket", "10.0.0.1") }),
      refusedFrom: "BASELINE",
      field: "spec.containers[0].readinessProbe.tcpSocket.host",
    },
    {
      name: "startupProbe.httpGet.host of an init container",
      template: pod({ initContainers: [restrictedContainer({ startupProbe: probe("httpGet", "db") })] }),
      refusedFrom: "BASELINE",
      field: "spec.initContainers[0].startupProbe.httpGet.host",
    },
    {
      name: "lifecycle.postStart.httpGet.host",
      template: pod({}, { lifecycle: { postStart: probe("httpGet", "metadata.google.internal") } }),
      refusedFrom: "BASELINE",
      field: "spec.containers[0].lifecycle.postStart.httpGet.host",
    },
    {
      name: "lifecycle.preStop.tcpSocket.host",
      template: pod({}, { lifecycle: { preStop: probe("tcpSocket", "10.0.0.1") } }),
      refusedFrom: "BASELINE",
      field: "spec.containers[0].lifecycle.preStop.tcpSocket.host",
    },
    {
      name: "probes without a host (or an empty one)",
      template: pod({}, { livenessProbe: probe("httpGet", ""), readinessProbe: { tcpSocket: { port: 1 } } }),
      refusedFrom: null,
    },
  ]);
});

describe("pod security v1.37: the safe sysctls", () => {
  const sysctl = (name: string) => pod(podSc({ sysctls: [{ name, value: "1" }] }));
  runTable([
    ...[
      "net.ipv4.tcp_rmem",
      "net.ipv4.tcp_wmem",
      "net.ipv4.tcp_slow_start_after_idle",
      "net.ipv4.tcp_notsent_lowat",
      "net.ipv4.tcp_keepalive_probes",
    ].map((name) => ({ name, template: sysctl(name), refusedFrom: null })),
    {
      name: "net.core.somaxconn",
      template: sysctl("net.core.somaxconn"),
      refusedFrom: "BASELINE" as const,
      field: "spec.securityContext.sysctls[0].name",
    },
  ]);
});

describe("pod security v1.37: user namespaces (hostUsers: false)", () => {
  runTable([
    {
      name: "procMount Unmasked in a user namespace: Baseline allows, Restricted does not",
      template: pod({ hostUsers: false }, { securityContext: { procMount: "Unmasked" } }),
      refusedFrom: "RESTRICTED",
      field: "spec.containers[0].securityContext.procMount",
    },
    {
      name: "procMount Unmasked on the host's users",
      template: pod({ hostUsers: true }, { securityContext: { procMount: "Unmasked" } }),
      refusedFrom: "BASELINE",
      field: "spec.containers[0].securityContext.procMount",
    },
    {
      name: "root in a user namespace passes Restricted's non-root controls",
      template: pod({
        hostUsers: false,
        securityContext: { runAsUser: 0, runAsNonRoot: false, seccompProfile: { type: "RuntimeDefault" } },
      }),
      refusedFrom: null,
    },
  ]);
});

describe("pod security v1.37: AppArmor, seccomp and volumes at their latest versions", () => {
  const annotation = "container.apparmor.security.beta.kubernetes.io/main";
  runTable([
    {
      name: "an empty AppArmor annotation",
      template: pod({}, {}, { annotations: { [annotation]: "" } }),
      refusedFrom: null,
    },
    {
      name: "a localhost/ AppArmor annotation",
      template: pod({}, {}, { annotations: { [annotation]: "localhost/k8s-apparmor" } }),
      refusedFrom: null,
    },
    {
      name: "a seccomp type other than RuntimeDefault or Localhost",
      template: pod({}, { securityContext: { seccompProfile: { type: "Bogus" } } }),
      refusedFrom: "BASELINE",
      field: "spec.containers[0].securityContext.seccompProfile.type",
    },
    {
      name: "an image volume",
      template: pod({ volumes: [{ name: "model", image: { reference: "registry/model:1" } }] }),
      refusedFrom: null,
    },
    {
      name: "a gitRepo volume",
      template: pod({ volumes: [{ name: "src", gitRepo: { repository: "x" } }] }),
      refusedFrom: "RESTRICTED",
      field: "spec.volumes[0].gitRepo",
    },
  ]);
});

describe("pod security v1.37: Windows pods", () => {
  const windows = (spec: Json = {}, container: Json = {}): Json => ({
    spec: { os: { name: "windows" }, containers: [{ name: "main", image: "x", ...container }], ...spec },
  });
  runTable([
    {
      name: "a Windows pod without the Linux-only restricted settings",
      template: windows({ securityContext: { runAsNonRoot: true } }),
      refusedFrom: null,
    },
    {
      name: "a Windows pod adding a capability: Restricted does not judge capabilities there",
      template: windows(
        { securityContext: { runAsNonRoot: true } },
        { securityContext: { capabilities: { add: ["SYS_ADMIN"] } } },
      ),
      refusedFrom: "BASELINE",
      refusedAt: ["BASELINE"],
      field: "spec.containers[0].securityContext.capabilities.add[0]",
    },
    {
      name: "a Windows pod with seccomp Unconfined: Restricted does not judge seccomp there",
      template: windows({ securityContext: { runAsNonRoot: true, seccompProfile: { type: "Unconfined" } } }),
      refusedFrom: "BASELINE",
      refusedAt: ["BASELINE"],
      field: "spec.securityContext.seccompProfile.type",
    },
    {
      name: "a Windows HostProcess pod",
      template: windows({ securityContext: { runAsNonRoot: true, windowsOptions: { hostProcess: true } } }),
      refusedFrom: "BASELINE",
      field: "spec.securityContext.windowsOptions.hostProcess",
    },
  ]);
});
