import { buildQaApp } from './qa/app.js';
import type { QaDeps } from './qa/deps.js';
import { buildVerifyApp } from './verify/app.js';

export interface OpenApiDocuments {
  qa: Record<string, unknown>;
  verify: Record<string, unknown>;
}

/**
 * The OpenAPI documents both services serve (GET /api/openapi.json, GET /openapi.json), taken from the apps built
 * in this process: nothing listens and no request is made. The client's types are generated from these.
 */
export async function openApiDocuments(deps: QaDeps): Promise<OpenApiDocuments> {
  const documentOf = async (app: Awaited<ReturnType<typeof buildQaApp | typeof buildVerifyApp>>) => {
    try {
      await app.ready();
      return structuredClone(app.swagger()) as unknown as Record<string, unknown>;
    } finally {
      await app.close();
    }
  };
  return {
    qa: await documentOf(await buildQaApp(deps)),
    verify: await documentOf(await buildVerifyApp(deps)),
  };
}
