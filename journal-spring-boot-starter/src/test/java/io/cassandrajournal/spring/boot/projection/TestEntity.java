package io.cassandrajournal.spring.boot.projection;

import java.util.Set;

import io.cassandrajournal.entity.EventSourcedEntity;

/** A balance folded from {@link TestEvents}. */
public final class TestEntity implements EventSourcedEntity<Long, TestEvents> {

	@Override
	public Long emptyState() {
		return 0L;
	}

	@Override
	public Long applyEvent(Long balance, TestEvents event) {
		return (event instanceof TestEvents.Deposited d) ? balance + d.amount()
				: balance - ((TestEvents.Withdrawn) event).amount();
	}

	@Override
	public Set<String> tagsFor(TestEvents event) {
		return Set.of("starter");
	}

	@Override
	public Class<TestEvents> eventType() {
		return TestEvents.class;
	}

	@Override
	public Class<Long> stateType() {
		return Long.class;
	}

}
