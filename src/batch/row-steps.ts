/**
 * The per-row steps of `payouts run` (STYLE.md pipeline: beneficiary → recipient → simulation →
 * transaction), each recorded in the checkpoint as it happens. The transaction's intent is
 * on disk before its request leaves (PRODUCT.md "Never pay twice").
 */
import type { PayoutsClient } from '../api/client.js';
import { isSimulationExpired } from '../api/transactions.js';
import { hashDedupeKey, idempotencyKey } from '../checkpoint/fingerprint.js';
import type { Journal, JournalState } from '../checkpoint/journal.js';
import { PayoutsError } from '../errors.js';
import type { PayoutRow } from '../rows/types.js';
import { asStepFailure, notSentInterrupted, StepFailure, transactionFailure } from './outcome.js';
import type { RowStatus } from './summary.js';

/** What a row came to in this run: its results-file columns. */
export interface RowResult {
  status: RowStatus;
  errors: string[];
  beneficiaryId?: string;
  recipientId?: string;
  simulationId?: string;
  transactionId?: string;
}

/** How often an expired quote is replaced before the row is given up (issue 4, item 3). */
const MAX_REQUOTES = 3;

/** Runs concurrent requests for one key once: rows naming the same payee wait on one creation. */
class OncePerKey {
  private readonly inFlight = new Map<string, Promise<string>>();

  run(key: string, create: () => Promise<string>): Promise<string> {
    let promise = this.inFlight.get(key);
    if (!promise) {
      promise = create();
      this.inFlight.set(key, promise);
      // A failed creation may be tried again by a later row (the failure may have been passing).
      promise.catch(() => this.inFlight.delete(key));
    }
    return promise;
  }
}

export interface RowStepsOptions {
  client: PayoutsClient;
  journal: Journal;
  /** The checkpoint as it was when the run started. */
  resumed: JournalState;
  batchId: string;
  keySalt: string;
  retryUnknown: boolean;
  signal: AbortSignal;
}

/** Carries one batch's rows through the service; shared state is the dedupe of creations. */
export class RowSteps {
  private readonly beneficiaries = new OncePerKey();
  private readonly recipients = new OncePerKey();

  constructor(private readonly options: RowStepsOptions) {}

  /**
   * Sends one valid row, or skips it when an earlier run finished it. Row-level failures become
   * its result; only errors that end the whole run (refused credentials, a bug) are thrown.
   */
  async process(payout: PayoutRow, rowNumber: number): Promise<RowResult> {
    const earlier = this.earlierOutcome(payout);
    if (earlier) return earlier;
    const result: RowResult = { status: 'failed', errors: [] };
    try {
      this.stopIfInterrupted();
      result.beneficiaryId = await this.beneficiary(payout, rowNumber);
      this.stopIfInterrupted();
      result.recipientId = await this.recipient(payout, rowNumber, result.beneficiaryId);
      this.stopIfInterrupted();
      const resend = this.options.resumed.rows.get(payout.reference)?.intent;
      await this.transaction(payout, rowNumber, result, resend?.simulationId);
      return result;
    } catch (error) {
      const failure = asStepFailure(error);
      return { ...result, status: failure.status, errors: failure.messages };
    }
  }

  /**
   * What an earlier run of this batch already did with the row: a transaction created or
   * refused (skipped), or one whose outcome is unknown (left alone unless --retry-unknown).
   */
  private earlierOutcome(payout: PayoutRow): RowResult | undefined {
    const row = this.options.resumed.rows.get(payout.reference);
    if (!row?.intent) return undefined;
    const ids = {
      beneficiaryId: row.steps.beneficiary?.id,
      recipientId: row.steps.recipient?.id,
      simulationId: row.intent.simulationId,
      transactionId: row.outcome?.transactionId,
    };
    const outcome = row.outcome?.status;
    if (outcome === 'submitted' || outcome === 'completed') {
      return {
        status: 'skipped',
        errors: [
          `already ${outcome} by an earlier run of this batch (transaction ${ids.transactionId ?? '?'})`,
        ],
        ...ids,
      };
    }
    if (outcome === 'failed' && ids.transactionId !== undefined) {
      // The transaction exists and failed (the bank refused it). Its Idempotency-Key would only
      // replay the original answer, which would make the row look submitted: it stays failed.
      return {
        status: 'failed',
        errors: [
          row.outcome?.error ?? 'the transaction failed',
          `transaction ${ids.transactionId} failed in an earlier run of this batch and is not sent again; to pay it, fix the recipient and add the payout under a new reference`,
        ],
        ...ids,
      };
    }
    if (outcome === 'failed') return undefined; // refused before: nothing was paid, so try again
    if (this.options.retryUnknown) return undefined;
    return {
      status: 'unknown',
      errors: [
        'the transaction request was being sent when an earlier run stopped, so its outcome is unknown; check the payments dashboard, or run again with --retry-unknown to re-send it with the same Idempotency-Key (the service then answers with the existing transaction instead of paying twice)',
      ],
      ...ids,
    };
  }

  private async beneficiary(payout: PayoutRow, row: number): Promise<string | undefined> {
    const ref = payout.beneficiary;
    if (ref.kind === 'existing') return ref.id;
    if (ref.kind !== 'new') return undefined;
    return this.created('beneficiary', ref.key, payout, row, (idempotencyKey) =>
      this.options.client.beneficiaries.create(ref.request, { idempotencyKey }),
    );
  }

  private async recipient(
    payout: PayoutRow,
    row: number,
    beneficiaryId: string | undefined,
  ): Promise<string> {
    const ref = payout.recipient;
    if (ref.kind === 'existing') return ref.id;
    // A new beneficiary's id exists only now: the mapped request has none.
    const request = payout.beneficiary.kind === 'new' ? { ...ref.request, beneficiaryId } : ref.request;
    return this.created('recipient', ref.key, payout, row, (idempotencyKey) =>
      this.options.client.recipients.create(request, { idempotencyKey }),
    );
  }

  /**
   * The id of what `key` names: known from an earlier run, or created once for all the rows
   * that name it (rows under way at the same time wait on one creation), journaled, and sent
   * with an Idempotency-Key so that a retry or a resumed run gets the same record back.
   */
  private async created(
    kind: 'beneficiary' | 'recipient',
    key: string,
    payout: PayoutRow,
    row: number,
    create: (idempotencyKey: string) => Promise<{ id: string }>,
  ): Promise<string> {
    const { resumed, journal } = this.options;
    const known = kind === 'beneficiary' ? resumed.beneficiaryId(key) : resumed.recipientId(key);
    if (known) return known;
    const once = kind === 'beneficiary' ? this.beneficiaries : this.recipients;
    const id = await once.run(key, async () => {
      const record = await create(this.creationKey(kind, key));
      await journal.append({ type: kind, key, id: record.id, row, reference: payout.reference });
      return record.id;
    });
    await this.step(payout, row, kind, id);
    return id;
  }

  /**
   * Quote, then pay: intent on disk, then the POST with the row's Idempotency-Key, then the
   * outcome. An expired quote is replaced and sent again under the same key (the service
   * releases a key on a 4xx answer; docs/api-assumptions.md).
   */
  private async transaction(payout: PayoutRow, row: number, result: RowResult, resendSimulationId?: string) {
    const { client, journal } = this.options;
    const key = idempotencyKey(this.options.batchId, payout.reference);
    let simulationId = resendSimulationId;
    for (let quote = 0; ; quote += 1) {
      if (simulationId === undefined) {
        this.stopIfInterrupted();
        const simulation = await client.simulations.create({
          recipientId: result.recipientId!,
          amount: payout.amount!.text,
          currency: payout.currency!,
        });
        simulationId = simulation.id;
        await this.step(payout, row, 'simulation', simulationId);
      }
      result.simulationId = simulationId;
      await journal.append({
        type: 'intent',
        row,
        reference: payout.reference,
        idempotencyKey: key,
        simulationId,
      });
      try {
        const created = await client.transactions.create(
          { simulationId, reference: payout.reference },
          { idempotencyKey: key },
        );
        result.transactionId = created.transaction.id;
        result.status = created.transaction.status === 'COMPLETED' ? 'completed' : 'submitted';
        if (created.transaction.status === 'FAILED') {
          result.status = 'failed';
          result.errors = [created.transaction.failureReason ?? 'the transaction failed'];
        }
        await journal.append({
          type: 'outcome',
          row,
          reference: payout.reference,
          idempotencyKey: key,
          status:
            result.status === 'failed' ? 'failed' : result.status === 'completed' ? 'completed' : 'submitted',
          transactionId: created.transaction.id,
          ...(result.status === 'failed' ? { error: result.errors.join('; ') } : {}),
          requestId: created.requestId,
        });
        return;
      } catch (error) {
        if (isSimulationExpired(error) && quote < MAX_REQUOTES) {
          simulationId = undefined;
          continue;
        }
        const failure = transactionFailure(error);
        await journal.append({
          type: 'outcome',
          row,
          reference: payout.reference,
          idempotencyKey: key,
          status: failure.status === 'unknown' ? 'unknown' : 'failed',
          error: failure.messages.join('; '),
          ...(error instanceof PayoutsError && error.requestId ? { requestId: error.requestId } : {}),
        });
        throw failure;
      }
    }
  }

  /**
   * SIGINT/SIGTERM: requests under way finish (their answers are recorded), but a row does not
   * start its next step, so nothing new is sent after the signal.
   */
  private stopIfInterrupted(): void {
    if (this.options.signal.aborted) throw new StepFailure('skipped', [notSentInterrupted]);
  }

  private async step(
    payout: PayoutRow,
    row: number,
    step: 'beneficiary' | 'recipient' | 'simulation',
    id: string,
  ) {
    await this.options.journal.append({ type: 'step', row, reference: payout.reference, step, ok: true, id });
  }

  /** Idempotency-Key of a creation: the batch and the hashed dedupe key, so retries replay. */
  private creationKey(kind: string, key: string): string {
    return idempotencyKey(this.options.batchId, `${kind}:${hashDedupeKey(this.options.keySalt, key)}`);
  }
}
