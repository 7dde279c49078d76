package io.cassandrajournal.sample.readmodel;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.ExecutionInfo;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.api.core.cql.Statement;
import org.junit.jupiter.api.Test;
import org.springframework.data.cassandra.core.convert.MappingCassandraConverter;
import org.springframework.data.cassandra.core.mapping.CassandraMappingContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

/**
 * The read-model tables are created with a one-minute timeout (not the driver's 2 s default that a fresh 3-node
 * cluster exceeds) and start-up waits until the nodes agree on the schema, as the journal does. Schema agreement
 * is immediate on one node, so the cluster's answers are scripted here; BankApplicationIT shows the tables created
 * on a real node.
 */
class ReadModelSchemaTest {

	@Test
	void createsEachTableWithTheLongTimeoutAndWaitsForAgreement() {
		CqlSession session = mock(CqlSession.class);
		ResultSet result = mock(ResultSet.class);
		ExecutionInfo info = mock(ExecutionInfo.class);
		when(result.getExecutionInfo()).thenReturn(info);
		when(info.isSchemaInAgreement()).thenReturn(false);
		List<SimpleStatement> executed = new ArrayList<>();
		when(session.execute(any(Statement.class))).thenAnswer((call) -> {
			executed.add(call.getArgument(0));
			return result;
		});
		// Not in agreement after the first look of each table, then agreed.
		when(session.checkSchemaAgreement()).thenReturn(false, true, false, true);
		CassandraMappingContext context = new CassandraMappingContext();
		MappingCassandraConverter converter = new MappingCassandraConverter(context);
		converter.afterPropertiesSet();

		new ReadModelSchema(session, converter).afterPropertiesSet();

		assertThat(executed).extracting(SimpleStatement::getQuery)
			.satisfiesExactly((cql) -> assertThat(cql).startsWith("CREATE TABLE IF NOT EXISTS account_balances"),
					(cql) -> assertThat(cql).startsWith("CREATE TABLE IF NOT EXISTS account_statements"));
		assertThat(executed).extracting(SimpleStatement::getTimeout).containsOnly(Duration.ofMinutes(1));
		verify(session, times(4)).checkSchemaAgreement();
	}

	@Test
	void noWaitWhenTheDriverAlreadySawAgreement() {
		CqlSession session = mock(CqlSession.class);
		ResultSet result = mock(ResultSet.class);
		ExecutionInfo info = mock(ExecutionInfo.class);
		when(result.getExecutionInfo()).thenReturn(info);
		when(info.isSchemaInAgreement()).thenReturn(true);
		when(session.execute(any(Statement.class))).thenReturn(result);

		ReadModelSchema.createAndAwaitAgreement(session, "CREATE TABLE IF NOT EXISTS t (k text PRIMARY KEY)");

		verify(session, times(0)).checkSchemaAgreement();
	}

}
