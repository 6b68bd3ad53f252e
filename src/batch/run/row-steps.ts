/**
 * The per-row steps of `payouts run` (beneficiary → recipient → simulation → transaction), each
 * recorded in the register as it happens. The transaction's intent is durable before its request
 * leaves (docs/register.md "The rules").
 */
import type { PayoutsClient } from '../../api/client.js';
import { isSimulationExpired, payeeGone } from '../../api/transactions.js';
import {
  creationKey,
  type ScopeIdentity,
  transactionKey as transactionKeyOf,
} from '../../register/identity.js';
import type { PayoutChange, PayoutRecord, ScopeStore } from '../../register/types.js';
import type { PayoutRow } from '../../rows/types.js';
import type { RowResult } from '../summary.js';
import { asStepFailure, notSentInterrupted, StepFailure, transactionFailure } from './outcome.js';

/** The payee ids of a row that the service no longer knows, to be created anew. */
interface Replacing {
  beneficiary?: string;
  recipient?: string;
}

/**
 * A remembered payee id the service no longer knows (deleted, or a service that forgot it): the
 * row creates it anew once. Thrown before any transaction request left for the row.
 */
class PayeeGone extends Error {
  constructor(
    readonly kind: 'beneficiary' | 'recipient',
    readonly id: string,
    override readonly cause: unknown,
    /** The recipient of a gone beneficiary: it goes with it. */
    readonly recipientId?: string,
  ) {
    super(`${kind} ${id} is gone`);
  }
}

/** How often an expired quote is replaced before the row is given up. */
const MAX_REQUOTES = 3;

/**
 * Runs concurrent requests for one key once: rows naming the same payee wait on one creation.
 * Only creations under way are held (a run of a million payees must not keep a million keys);
 * the id of one done is what the caller remembers.
 */
class OncePerKey {
  private readonly inFlight = new Map<string, Promise<string>>();

  run(key: string, create: () => Promise<string>): Promise<string> {
    let promise = this.inFlight.get(key);
    if (!promise) {
      promise = create();
      this.inFlight.set(key, promise);
      // Done or failed, the next row asks again: the id is remembered by then (a failure may
      // have been passing).
      const forget = () => {
        if (this.inFlight.get(key) === promise) this.inFlight.delete(key);
      };
      promise.then(forget, forget);
    }
    return promise;
  }
}

/** A row's payee: the keyed identity its history is filed under, and the name the sheet gives. */
export interface PayeeOfRow {
  key: string;
  name: string;
}

/** What the register keeps of a row with its intent to send, beyond the payout itself. */
export interface RowSending {
  payee?: PayeeOfRow | undefined;
  /** The row's warnings as judged before sending (encodeWarnings). */
  warnings?: string | undefined;
}

export interface RowStepsOptions {
  client: PayoutsClient;
  /** The register of this service and integrator. */
  store: ScopeStore;
  scope: ScopeIdentity;
  /** This run, the holder of the claims it sends. */
  runId: string;
  signal: AbortSignal;
}

/** Carries one batch's claimed rows through the service; shared state is the dedupe of creations. */
export class RowSteps {
  private readonly beneficiaries = new OncePerKey();
  private readonly recipients = new OncePerKey();
  /**
   * What the register said, for the rows about to be sent, of their payees: the id created
   * earlier, or undefined when there was none then. A payee created since by another run is
   * created again under the same Idempotency-Key, which gets its record back.
   */
  private readonly prefetched = new Map<string, string | undefined>();

  constructor(private readonly options: RowStepsOptions) {}

  /** Looks up the payees of the rows about to be sent, one query per kind, not two per row. */
  async prefetch(payouts: readonly PayoutRow[]): Promise<void> {
    // Rows of the batch before may still be under way: keep theirs, within a bound.
    if (this.prefetched.size > 1024) this.prefetched.clear();
    const { store } = this.options;
    for (const kind of ['beneficiary', 'recipient'] as const) {
      const fingerprints = new Set<string>();
      for (const payout of payouts) {
        const ref = kind === 'beneficiary' ? payout.beneficiary : payout.recipient;
        if (ref.kind === 'new') fingerprints.add(store.fingerprint(`${kind}\n${ref.key}`));
      }
      if (fingerprints.size === 0) continue;
      const known = await store.payees(kind, [...fingerprints]);
      for (const fingerprint of fingerprints) this.prefetched.set(fingerprint, known.get(fingerprint));
    }
  }

  /**
   * Sends one claimed row (`resend`: the record of an unknown outcome that --retry-unknown
   * settles). Row-level failures become its result; only errors that end the whole run
   * (refused credentials, the register failing, a bug) are thrown.
   */
  async process(payout: PayoutRow, resend?: PayoutRecord, kept: RowSending = {}): Promise<RowResult> {
    const result: RowResult = { status: 'failed', errors: [] };
    // Payee ids the service no longer knows, each replaced once in this row (never a loop).
    const replacing: Replacing = {};
    const notes: string[] = [];
    for (;;) {
      let sending = false;
      try {
        this.stopIfInterrupted();
        result.beneficiaryId = await this.beneficiary(payout, replacing.beneficiary);
        this.stopIfInterrupted();
        result.recipientId = await this.recipient(payout, result.beneficiaryId, replacing.recipient);
        this.stopIfInterrupted();
        sending = true;
        await this.transaction(payout, result, resend?.simulationId, kept);
        return notes.length > 0 ? { ...result, errors: [...notes, ...result.errors] } : result;
      } catch (error) {
        if (error instanceof PayeeGone && this.renew(payout, error, replacing)) {
          notes.push(
            `the ${error.kind} ${error.id} that the register remembered for this payee no longer exists on the service (deleted), so it was created anew`,
          );
          continue;
        }
        const failure = asStepFailure(error instanceof PayeeGone ? error.cause : error);
        // Refused before its transaction was sent: nothing was paid, so the next run sends it
        // again. An interrupted row keeps its bare claim, which the run gives back at the end.
        if ((!sending || error instanceof PayeeGone) && failure.status === 'failed') {
          await this.record(payout, {
            state: 'refused',
            error: failure.messages.join(' | '),
            beneficiaryId: result.beneficiaryId,
            recipientId: result.recipientId,
          });
        }
        return { ...result, status: failure.status, errors: [...notes, ...failure.messages] };
      }
    }
  }

  /**
   * Marks the payee ids a PayeeGone names for replacement: the gone one, and for a gone
   * beneficiary its recipient too (a recipient belongs to one beneficiary). False when that
   * was done before for this row, or when the id came from the sheet (the sheet must change).
   */
  private renew(payout: PayoutRow, gone: PayeeGone, replacing: Replacing): boolean {
    if (replacing[gone.kind] !== undefined) return false;
    const ref = gone.kind === 'beneficiary' ? payout.beneficiary : payout.recipient;
    if (ref.kind !== 'new') return false;
    if (gone.kind === 'beneficiary') {
      replacing.beneficiary = gone.id;
      if (gone.recipientId !== undefined && payout.recipient.kind === 'new')
        replacing.recipient ??= gone.recipientId;
    } else {
      replacing.recipient = gone.id;
    }
    return true;
  }

  private async beneficiary(payout: PayoutRow, replacing?: string): Promise<string | undefined> {
    const ref = payout.beneficiary;
    if (ref.kind === 'existing') return ref.id;
    if (ref.kind !== 'new') return undefined;
    return this.created(
      'beneficiary',
      ref.key,
      (idempotencyKey) => this.options.client.beneficiaries.create(ref.request, { idempotencyKey }),
      { replacing },
    );
  }

  private async recipient(
    payout: PayoutRow,
    beneficiaryId: string | undefined,
    replacing?: string,
  ): Promise<string> {
    const ref = payout.recipient;
    if (ref.kind === 'existing') return ref.id;
    // A new beneficiary's id exists only now: the mapped request has none. The creation key
    // covers that id too: were the beneficiary ever created twice (a key the service released
    // with no answer), the same key must not carry two different requests.
    const request = payout.beneficiary.kind === 'new' ? { ...ref.request, beneficiaryId } : ref.request;
    try {
      return await this.created(
        'recipient',
        ref.key,
        (idempotencyKey) => this.options.client.recipients.create(request, { idempotencyKey }),
        { beneficiaryId, replacing },
      );
    } catch (error) {
      if (beneficiaryId !== undefined && payeeGone(error, 'recipient') === 'beneficiary')
        throw new PayeeGone('beneficiary', beneficiaryId, error);
      throw error;
    }
  }

  /**
   * The id of the payee `key` names: known to the register from any earlier sheet, or created
   * once for all the rows that name it (rows under way at the same time wait on one creation),
   * with an Idempotency-Key derived from the details, so a retry, a resumed run or another run
   * at the same moment gets the same record back.
   */
  private async created(
    kind: 'beneficiary' | 'recipient',
    key: string,
    create: (idempotencyKey: string) => Promise<{ id: string }>,
    options: { beneficiaryId?: string | undefined; replacing?: string | undefined } = {},
  ): Promise<string> {
    const { store, scope } = this.options;
    const { beneficiaryId, replacing } = options;
    const fingerprint = store.fingerprint(`${kind}\n${key}`);
    const known = this.prefetched.has(fingerprint)
      ? this.prefetched.get(fingerprint)
      : (await store.payees(kind, [fingerprint])).get(fingerprint);
    // A replaced id is not known any more; one replaced meanwhile by another row is.
    if (known && known !== replacing) return known;
    // Replacing a deleted one, the key names it: the old key would get the deleted record back.
    const dedupe = [key, beneficiaryId, replacing === undefined ? undefined : `replaces ${replacing}`]
      .filter((part) => part !== undefined)
      .join('\n');
    const once = kind === 'beneficiary' ? this.beneficiaries : this.recipients;
    return once.run(dedupe, async () => {
      const record = await create(creationKey(scope, kind, dedupe));
      await store.rememberPayee(kind, fingerprint, record.id);
      // The rows of this claim that name the payee too find it here, not by creating it again.
      this.prefetched.set(fingerprint, record.id);
      return record.id;
    });
  }

  /**
   * Quote, then pay: intent durable in the register, then the POST with the payout's
   * Idempotency-Key, then the outcome. An expired quote is replaced and sent again under the
   * same key (the service releases a key on a 4xx answer; docs/api-assumptions.md).
   */
  private async transaction(
    payout: PayoutRow,
    result: RowResult,
    resendSimulationId?: string,
    { payee, warnings }: RowSending = {},
  ) {
    const { client } = this.options;
    const key = this.keyOf(payout);
    let simulationId = resendSimulationId;
    for (let quote = 0; ; quote += 1) {
      if (simulationId === undefined) {
        this.stopIfInterrupted();
        simulationId = await this.quote(payout, result);
      }
      result.simulationId = simulationId;
      await this.record(payout, {
        state: 'sending',
        simulationId,
        beneficiaryId: result.beneficiaryId,
        recipientId: result.recipientId,
        // Who it pays, so that an outcome learnt later joins the right payee history.
        ...(payee === undefined ? {} : { payeeKey: payee.key, payeeName: payee.name }),
        ...(warnings === undefined ? {} : { warnings }),
      });
      let created: Awaited<ReturnType<PayoutsClient['transactions']['create']>>;
      try {
        created = await client.transactions.create(
          { simulationId, reference: payout.reference },
          { idempotencyKey: key },
        );
      } catch (error) {
        if (isSimulationExpired(error) && quote < MAX_REQUOTES) {
          simulationId = undefined;
          continue;
        }
        const failure = transactionFailure(error);
        // Unknown: it may have been paid. Failed: refused with no transaction, sent again next run.
        await this.recordAnswer(result, payout, {
          state: failure.status === 'unknown' ? 'unknown' : 'refused',
          error: failure.messages.join(' | '),
        });
        throw failure;
      }
      result.transactionId = created.transaction.id;
      result.status = created.transaction.status === 'COMPLETED' ? 'completed' : 'submitted';
      if (created.transaction.status === 'FAILED') {
        result.status = 'failed';
        result.errors = [created.transaction.failureReason ?? 'the transaction failed'];
      }
      await this.recordAnswer(result, payout, {
        state:
          result.status === 'failed' ? 'failed' : result.status === 'completed' ? 'completed' : 'submitted',
        transactionId: created.transaction.id,
        error: result.status === 'failed' ? result.errors.join(' | ') : null,
      });
      return;
    }
  }

  /**
   * Records what the transaction request came to. The service's answer is the row's truth
   * whatever happens here: a register that cannot take it (a full disk) ends the run, but the
   * row still shows its transaction id, or `unknown`, never "not sent". The register keeps the
   * row `sending`, which the next run settles under the same Idempotency-Key.
   */
  private async recordAnswer(result: RowResult, payout: PayoutRow, change: PayoutChange): Promise<void> {
    try {
      await this.record(payout, change);
    } catch (error) {
      result.runError = error;
    }
  }

  /** A new simulation for the row; a payee the service no longer knows is a PayeeGone. */
  private async quote(payout: PayoutRow, result: RowResult): Promise<string> {
    try {
      const simulation = await this.options.client.simulations.create({
        recipientId: result.recipientId!,
        amount: payout.amount!.text,
        currency: payout.currency!,
      });
      return simulation.id;
    } catch (error) {
      const gone = payeeGone(error, 'simulation');
      if (gone === 'recipient') throw new PayeeGone('recipient', result.recipientId!, error);
      if (gone === 'beneficiary' && result.beneficiaryId !== undefined)
        throw new PayeeGone('beneficiary', result.beneficiaryId, error, result.recipientId);
      throw error;
    }
  }

  /** The Idempotency-Key of a payout's transaction, from the service, integrator and reference. */
  keyOf(payout: PayoutRow): string {
    return transactionKeyOf(this.options.scope, payout.reference);
  }

  /**
   * SIGINT/SIGTERM: requests under way finish (their answers are recorded), but a row does not
   * start its next step, so nothing new is sent after the signal.
   */
  private stopIfInterrupted(): void {
    if (this.options.signal.aborted) throw new StepFailure('skipped', [notSentInterrupted]);
  }

  private record(payout: PayoutRow, change: PayoutChange): Promise<void> {
    return this.options.store.update(this.options.runId, payout.reference, change);
  }
}
