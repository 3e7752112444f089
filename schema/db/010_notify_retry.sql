-- sluice state database, migration 10: notifications retried over time
-- (docs/config.md, "Notifications"). A failed delivery is tried again when
-- next_ms has come: 30 s after the first failure, the wait doubling to 1 h,
-- until notify.retry_for after the event, then given up (runner/notify.c).
-- A tick sends what is due, oldest first, and never a later event to a
-- notifier before an earlier one still pending there.
ALTER TABLE notify_outbox ADD COLUMN next_ms INTEGER NOT NULL DEFAULT 0; -- 0: due now
-- A failure's message used to hold notify.url whole, with its user,
-- password, path and query: those messages go (docs/RELIABILITY.md,
-- "Trust, round 3: notifications").
UPDATE notify_outbox SET last_error = 'notify.url: (an older message, dropped: it showed the URL)'
	WHERE last_error LIKE '%notify.url:%';
