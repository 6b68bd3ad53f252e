/**
 * Simulations: the quote a transaction is created from (docs/service.md "Resources and calls";
 * path and body assumed).
 */
import { PATHS, type Simulation, type SimulationRequest, SimulationSchema } from './contract.js';
import type { CallOptions, Requester } from './http.js';

export interface SimulationsApi {
  /** POST /v1/simulations (200). */
  create(request: SimulationRequest, options?: CallOptions): Promise<Simulation>;
  /** GET /v1/simulations/{id}. */
  get(id: string, options?: CallOptions): Promise<Simulation>;
}

/** The simulation endpoints over `http`. */
export function simulationsApi(http: Requester): SimulationsApi {
  return {
    // A quote moves no money: a repeated one is just an unused quote, so retries are safe.
    create: (request, { signal } = {}) =>
      http.requestAs<Simulation>(SimulationSchema, {
        method: 'POST',
        path: PATHS.simulations,
        auth: true,
        body: request,
        safeToRepeat: true,
        signal,
      }),

    get: (id, { signal } = {}) =>
      http.requestAs<Simulation>(SimulationSchema, {
        method: 'GET',
        path: PATHS.simulation(id),
        auth: true,
        signal,
      }),
  };
}
