/**
 * A payee's history as the register stores it: JSON, in which a payday that is also the last
 * payout to its account (most of them: a payee paid once a month to one account has one of each)
 * is written once, as the index of that account. Read back, such a payday is that account's
 * payout itself, the same object, which needs no copy: `validate` reads a history for every
 * known payee of a sheet, and the paydays written out again were a third of each history's text
 * and of the time spent parsing it.
 *
 * Histories written before keep their paydays whole and read as ever; each takes this form the
 * next time it changes.
 */
import { accountTag, paydayTag } from './rules.js';
import type { PayeeHistory, PayeeLayer, PayeePayday, PayeePayment } from './types.js';

/** A layer as stored: a payday that is its account's last payout is that account's index. */
interface StoredLayer extends Omit<PayeeLayer, 'payments'> {
  payments?: (PayeePayday | number)[];
}

/** The text of a history, as the register keeps it. */
export function historyText(history: PayeeHistory): string {
  const { before, ...current } = history;
  return JSON.stringify({
    ...current,
    ...storedLayer(current),
    ...(before === undefined ? {} : { before: storedLayer(before) }),
  });
}

/** The history a text of historyText (or of any earlier payouts) holds. */
export function historyFromText(text: string): PayeeHistory {
  const history = JSON.parse(text) as PayeeHistory & StoredLayer & { before?: StoredLayer };
  resolve(history);
  if (history.before !== undefined) resolve(history.before);
  return history as PayeeHistory;
}

function storedLayer(layer: PayeeLayer): StoredLayer {
  const { accounts, payments, largest } = layer;
  if (payments === undefined) return { accounts, largest };
  return {
    accounts,
    payments: payments.map((payday) => {
      const index = accounts.findIndex((paid) => samePayout(paid, payday));
      return index < 0 ? plainPayday(payday) : index;
    }),
    largest,
  };
}

/** Puts each account's payout in the place of its index, in place: the text was just parsed. */
function resolve(layer: StoredLayer): void {
  const { accounts, payments } = layer;
  if (payments === undefined) return;
  for (let i = 0; i < payments.length; i++) {
    const held = payments[i]!;
    if (typeof held !== 'number') continue;
    const paid = accounts[held];
    if (paid === undefined)
      throw new Error(
        `a payee history names account ${held} of ${accounts.length} as a payday's (the register is damaged)`,
      );
    payments[i] = paid;
  }
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
