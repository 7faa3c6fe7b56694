// oidc-provider ships no type declarations: the little of it the tests use, loosely typed.
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  export type ClientMetadata = { client_id: string; [key: string]: unknown };
  // biome-ignore lint/suspicious/noExplicitAny: the provider's configuration is a large untyped object
  export type Configuration = { features?: Record<string, any>; [key: string]: any };

  export default class Provider {
    constructor(issuer: string, configuration?: Configuration);
    issuer: string;
    proxy: boolean;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    // biome-ignore lint/suspicious/noExplicitAny: model classes of the provider
    Client: { find(id: string): Promise<any> };
    // biome-ignore lint/suspicious/noExplicitAny: model classes of the provider
    AccessToken: new (
      values: Record<string, unknown>,
    ) => { save(): Promise<string>; [key: string]: any };
    ResourceServer: new (
      identifier: string,
      data: Record<string, unknown>,
    ) => unknown;
    // biome-ignore lint/suspicious/noExplicitAny: the provider's events
    on(event: string, listener: (...args: any[]) => void): this;
  }
}
