// The README's quick-start entity, between the tags (ReadmeSnippetsTest keeps the README equal to them;
// QuickStartTest runs it). Not in the sample's packages, so the sample's own tests never scan these beans.
package io.cassandrajournal.docs;

// tag::quickstart-entity[]
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionStage;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import org.springframework.stereotype.Service;

import io.cassandrajournal.entity.EntityRepositories;
import io.cassandrajournal.entity.EntityRepository;
import io.cassandrajournal.entity.EventSourcedEntity;

@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "kind")
@JsonSubTypes({ @JsonSubTypes.Type(value = Deposited.class, name = "deposited"),
                @JsonSubTypes.Type(value = Withdrawn.class, name = "withdrawn") })
sealed interface AccountEvent permits Deposited, Withdrawn { }
record Deposited(long amount) implements AccountEvent { }   // stored as {"kind":"deposited","amount":5}
record Withdrawn(long amount) implements AccountEvent { }

final class AccountEntity implements EventSourcedEntity<Long, AccountEvent> {
    public Long emptyState() { return 0L; }
    public Long applyEvent(Long balance, AccountEvent e) {
        return (e instanceof Deposited d) ? balance + d.amount() : balance - ((Withdrawn) e).amount();
    }
    public Set<String> tagsFor(AccountEvent e) { return Set.of("account"); }
    public Class<AccountEvent> eventType() { return AccountEvent.class; }
    public Class<Long> stateType() { return Long.class; }
}

class InsufficientFunds extends RuntimeException { }

@Service
class Accounts {
    private final EntityRepository<Long, AccountEvent> repository;

    Accounts(EntityRepositories repositories) {                 // a bean of the starter
        this.repository = repositories.create(new AccountEntity());
    }

    CompletionStage<Long> deposit(String id, long amount) {
        return repository.execute("account-" + id, current -> List.of(new Deposited(amount)))
            .thenApply(result -> result.state().state());
    }

    CompletionStage<Long> withdraw(String id, long amount) {
        return repository.execute("account-" + id, current -> {
            if (current.state() < amount) throw new InsufficientFunds();   // rejects: nothing is appended
            return List.of(new Withdrawn(amount));
        }).thenApply(result -> result.state().state());
    }
}
// end::quickstart-entity[]
