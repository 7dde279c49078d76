package io.cassandrajournal.sample.readmodel;

import org.springframework.data.cassandra.repository.CassandraRepository;

/** The balances read model. */
public interface AccountBalanceRepository extends CassandraRepository<AccountBalance, String> {
}
