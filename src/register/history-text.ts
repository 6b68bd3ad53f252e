/**
 * A payee's history as the register stores it: JSON, in which a payday that is also the last
 * payout to its account (most of them: a payee paid once a month to one account has one of each)
 * is written once, as the index of that account. Read back, such a payday is that account's
 * payout itself, the same object, which needs no copy: `validate` reads a history for every
 * known payee of a sheet, and the paydays written out again were a third of each history's text
 * and of the time spent parsing it.
 *
 * The paydays are stored under a name of their own, `paydays`, not the `payments` of the
 * histories written before, which read as ever and take this form the next time they change. A
 * payouts from before, still running while a newer one migrated the register they share, finds
 * no `payments` in a history of this form: it reads it as a history from before paydays were
 * kept (each account's last payout its payday), never an index taken for a payday, and writes
 * back its own `payments`, which this reader takes over any `paydays` left beside them.
 */
import { accountTag, paydayTag } from './rules.js';
import type { PayeeHistory, PayeeLayer, PayeePayday, PayeePayment } from './types.js';

/** A layer as stored: `paydays`, where a payday that is its account's last payout is its index. */
interface StoredLayer {
  accounts: PayeePayment[];
  paydays?: (PayeePayday | number)[];
  /** The paydays of a history written before this form (each one whole). */
  payments?: PayeePayday[];
  largest: Record<string, string>;
}

interface StoredHistory extends StoredLayer {
  batch: string;
  name?: string;
  before?: StoredLayer;
}

/** The text of a history, as the register keeps it. */
export function historyText(history: PayeeHistory): string {
  const { before, name } = history;
  const stored: StoredHistory = { ...storedLayer(history), batch: history.batch };
  if (name !== undefined) stored.name = name;
  if (before !== undefined) stored.before = storedLayer(before);
  return JSON.stringify(stored);
}

/** The history a text of historyText (or of any earlier payouts) holds. */
export function historyFromText(text: string): PayeeHistory {
  const stored = JSON.parse(text) as StoredHistory;
  const history: PayeeHistory = layerOf(stored) as PayeeHistory;
  history.batch = stored.batch;
  if (stored.name !== undefined) history.name = stored.name;
  if (stored.before !== undefined) history.before = layerOf(stored.before);
  return history;
}

function storedLayer(layer: PayeeLayer): StoredLayer {
  const { accounts, payments, largest } = layer;
  if (payments === undefined) return { accounts, largest };
  const paydays = payments.map((payday) => {
    const index = accounts.findIndex((paid) => samePayout(paid, payday));
    return index < 0 ? plainPayday(payday) : index;
  });
  return { accounts, paydays, largest };
}

/**
 * The layer a stored one holds, each payday given as an index taken from its account. A layer
 * with `payments` was last written by a payouts from before, whatever `paydays` it still carries
 * (taking a payout out, such a payouts keeps the history's other fields as they were): its
 * `payments` are the ones it meant, and the `paydays` may index accounts it has since moved.
 */
function layerOf(stored: StoredLayer): PayeeLayer {
  const { accounts, paydays, payments, largest } = stored;
  if (payments !== undefined) return { accounts, payments, largest };
  if (paydays === undefined) return { accounts, largest };
  // In place: the array was just parsed.
  for (let i = 0; i < paydays.length; i++) {
    const held = paydays[i]!;
    if (typeof held !== 'number') continue;
    const paid = accounts[held];
    if (paid === undefined)
      throw new Error(
        `a payee history names account ${held} of ${accounts.length} as a payday's (the register is damaged)`,
      );
    paydays[i] = paid;
  }
  return { accounts, payments: paydays as PayeePayday[], largest };
}

/** Whether a payday is the very payout `paid` records: same reference, date, amount, account. */
function samePayout(paid: PayeePayment, payday: PayeePayday): boolean {
  return (
    paid.reference === payday.reference &&
    paid.paidAt === payday.paidAt &&
    paid.amount === payday.amount &&
    paid.currency === payday.currency &&
    accountTag(paid.account) === paydayTag(payday)
  );
}

/**
 * A payday on its own, as paydays are written: an account's payout that stands as a payday
 * (read from a history, then no longer its account's last) keeps only what a payday holds.
 */
function plainPayday(payday: PayeePayday): PayeePayday {
  const tag = paydayTag(payday);
  const { reference, paidAt, amount, currency } = payday;
  return { reference, paidAt, amount, currency, ...(tag === undefined ? {} : { accountTag: tag }) };
}
