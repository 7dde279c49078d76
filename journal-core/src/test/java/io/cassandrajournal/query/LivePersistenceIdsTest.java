package io.cassandrajournal.query;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import io.cassandrajournal.inmemory.InMemoryJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.journal.Journal;
import io.cassandrajournal.testing.AccountEvent.Opened;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The live persistenceId stream's resources: its append listener and its announcements between polls.
 */
class LivePersistenceIdsTest {

	/** A journal that counts its registered append listeners. */
	private static Journal countingListeners(Journal journal, AtomicInteger listeners) {
		return (Journal) Proxy.newProxyInstance(Journal.class.getClassLoader(), new Class<?>[] { Journal.class },
				(proxy, method, args) -> {
					if (method.getName().equals("addAppendListener")) {
						listeners.incrementAndGet();
					}
					else if (method.getName().equals("removeAppendListener")) {
						listeners.decrementAndGet();
					}
					try {
						return method.invoke(journal, args);
					}
					catch (InvocationTargetException ex) {
						throw ex.getCause();
					}
				});
	}

	private static void open(Journal journal, String id) {
		result(journal.append(id, 0, List.of(EventToAppend.of(new Opened()))));
	}

	@Test
	void closingRemovesTheAppendListener() {
		AtomicInteger listeners = new AtomicInteger();
		Journal journal = countingListeners(new InMemoryJournal(), listeners);
		LivePersistenceIds live = new LivePersistenceIds(journal, 10);
		assertThat(listeners).hasValue(1);
		live.close();
		assertThat(listeners).as("listeners after close").hasValue(0);
		live.close();
		assertThat(listeners).as("closing twice removes nothing more").hasValue(0);

		open(journal, "after-close");
		assertThat(live.announcedPending()).as("a closed stream hears no appends").isZero();
		assertThat(result(live.poll())).as("but its listing still finds every id").containsExactly("after-close");
	}

	@Test
	void announcementsBetweenPollsAreCappedAndTheListingDeliversTheRest() {
		InMemoryJournal journal = new InMemoryJournal();
		LivePersistenceIds live = new LivePersistenceIds(journal, 7, 10);
		List<String> ids = new ArrayList<>();
		for (int i = 0; i < 25; i++) {
			String id = String.format("id-%02d", i);
			ids.add(id);
			open(journal, id);
		}
		assertThat(live.announcedPending()).as("announcements held between polls").isEqualTo(10);
		assertThat(result(live.poll())).as("every id once, the dropped announcements from the listing")
			.containsExactlyInAnyOrderElementsOf(ids);
		assertThat(live.announcedPending()).isZero();
		assertThat(result(live.poll())).isEmpty();
	}

}
