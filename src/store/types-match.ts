// Compile-time only: each plain type of types.ts is the generated client's, both ways. A column
// added to the schema (or a state to an enum) fails `tsc` here until types.ts has it too.
import type * as Generated from "./generated/prisma/client.js";
import type * as Enums from "./generated/prisma/enums.js";
import type * as Plain from "./types.js";

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Holds<T extends true> = T;

export type TypesMatchTheSchema = [
  Holds<Same<Plain.Cluster, Generated.Cluster>>,
  Holds<Same<Plain.Node, Generated.Node>>,
  Holds<Same<Plain.Queue, Generated.Queue>>,
  Holds<Same<Plain.QueueQuota, Generated.QueueQuota>>,
  Holds<Same<Plain.Job, Generated.Job>>,
  Holds<Same<Plain.JobTask, Generated.JobTask>>,
  Holds<Same<Plain.Pod, Generated.Pod>>,
  Holds<Same<Plain.BindRequest, Generated.BindRequest>>,
  Holds<Same<Plain.ApiToken, Generated.ApiToken>>,
  Holds<Same<Plain.RoleBinding, Generated.RoleBinding>>,
  Holds<Same<Plain.Webhook, Generated.Webhook>>,
  Holds<Same<Plain.WebhookDelivery, Generated.WebhookDelivery>>,
  Holds<Same<Plain.WebhookDeliveryState, Enums.WebhookDeliveryState>>,
  Holds<Same<Plain.ClusterState, Enums.ClusterState>>,
  Holds<Same<Plain.JobState, Enums.JobState>>,
  Holds<Same<Plain.PodState, Enums.PodState>>,
  Holds<Same<Plain.QuotaResource, Enums.QuotaResource>>,
  Holds<Same<Plain.Role, Enums.Role>>,
  Holds<Same<Plain.BindRequestKind, Enums.BindRequestKind>>,
  Holds<Same<Plain.BindRequestState, Enums.BindRequestState>>,
  Holds<Same<Plain.Queue["podSecurity"], Generated.Queue["podSecurity"]>>,
];
