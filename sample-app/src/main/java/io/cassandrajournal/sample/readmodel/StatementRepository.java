package io.cassandrajournal.sample.readmodel;

import java.util.List;

import org.springframework.data.cassandra.repository.CassandraRepository;

/** The statements read model. */
public interface StatementRepository extends CassandraRepository<StatementEntry, String> {

	List<StatementEntry> findByAccountId(String accountId);

}
