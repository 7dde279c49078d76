package io.cassandrajournal.testing;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/** A clock tests move by hand. */
public final class SettableClock extends Clock {

	private final AtomicLong millis;

	public SettableClock(Instant start) {
		this.millis = new AtomicLong(start.toEpochMilli());
	}

	public void set(Instant instant) {
		this.millis.set(instant.toEpochMilli());
	}

	public void advance(Duration duration) {
		this.millis.addAndGet(duration.toMillis());
	}

	@Override
	public long millis() {
		return this.millis.get();
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
