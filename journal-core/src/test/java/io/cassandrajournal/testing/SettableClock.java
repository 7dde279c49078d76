package io.cassandrajournal.testing;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/** A clock tests move by hand. */
public final class SettableClock extends Clock {

	private final AtomicLong millis;

	private final AtomicReference<Runnable> afterNextRead = new AtomicReference<>();

	public SettableClock(Instant start) {
		this.millis = new AtomicLong(start.toEpochMilli());
	}

	public void set(Instant instant) {
		this.millis.set(instant.toEpochMilli());
	}

	public void advance(Duration duration) {
		this.millis.addAndGet(duration.toMillis());
	}

	/**
	 * Runs {@code action} once, on the thread that next reads this clock, right after the read: something that happens
	 * between the read and what the code under test does next (a pause of that thread, say).
	 * @param action what to run
	 */
	public void afterNextRead(Runnable action) {
		this.afterNextRead.set(action);
	}

	@Override
	public long millis() {
		long now = this.millis.get();
		Runnable action = this.afterNextRead.getAndSet(null);
		if (action != null) {
			action.run();
		}
		return now;
	}

	@Override
	public Instant instant() {
		return Instant.ofEpochMilli(millis());
	}

	@Override
	public ZoneId getZone() {
		return ZoneOffset.UTC;
	}

	@Override
	public Clock withZone(ZoneId zone) {
		return this;
	}

}
