// The README's read-model snippet, between the tags (ReadmeSnippetsTest keeps the README equal to them).
package io.cassandrajournal.docs;

// tag::quickstart-read-model[]
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.springframework.stereotype.Component;

import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.spring.boot.projection.ProjectionHandler;

@Component
class BalanceView {
    // In memory to keep the example short. The projection's cursor is durable: after a restart it resumes where it
    // stopped, so a real read model lives where the cursor does (a Cassandra table, as in the sample).
    private final Map<String, Long> balances = new ConcurrentHashMap<>();
    private final Map<String, Long> lastSeen = new ConcurrentHashMap<>();

    @ProjectionHandler(name = "balances", tag = "account")
    void onDeposited(PersistentEvent<Deposited> event) {     // or just (Deposited event)
        apply(event, event.payload().amount());
    }

    @ProjectionHandler(name = "balances", tag = "account")   // same name: same cursor, dispatched by type
    void onWithdrawn(PersistentEvent<Withdrawn> event) {
        apply(event, -event.payload().amount());
    }

    private synchronized void apply(PersistentEvent<?> event, long delta) {
        // at-least-once delivery: skip what this view has already counted
        if (event.sequenceNr() <= lastSeen.getOrDefault(event.persistenceId(), 0L)) return;
        lastSeen.put(event.persistenceId(), event.sequenceNr());
        balances.merge(event.persistenceId(), delta, Long::sum);
    }

    Long balance(String persistenceId) { return balances.getOrDefault(persistenceId, 0L); }
}
// end::quickstart-read-model[]
