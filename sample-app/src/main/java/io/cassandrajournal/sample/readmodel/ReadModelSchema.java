package io.cassandrajournal.sample.readmodel;

import java.time.Duration;
import java.util.List;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.data.cassandra.core.convert.CassandraConverter;
import org.springframework.data.cassandra.core.convert.SchemaFactory;
import org.springframework.data.cassandra.core.cql.generator.CqlGenerator;
import org.springframework.data.cassandra.core.mapping.CassandraPersistentEntity;
import org.springframework.stereotype.Component;

/**
 * Creates the read-model tables the way the journal creates its own: each {@code CREATE TABLE IF NOT EXISTS}
 * with a one-minute timeout, then waiting until every node agrees on the schema. Spring Data's
 * {@code spring.cassandra.schema-action} runs them with the driver's 2 s default request timeout, which a fresh
 * multi-node cluster exceeds while its nodes agree on the new tables: the sample then did not start. The CQL
 * still comes from the entity mappings (Spring Data's {@link SchemaFactory}), so it cannot drift from them.
 */
@Component
public class ReadModelSchema implements InitializingBean {

	/** The timeout of each schema statement (the journal uses the same for its tables). */
	static final Duration SCHEMA_TIMEOUT = Duration.ofMinutes(1);

	/** How long to wait for schema agreement after a table was created. */
	static final Duration AGREEMENT_TIMEOUT = Duration.ofMinutes(1);

	private static final List<Class<?>> ENTITIES = List.of(AccountBalance.class, StatementEntry.class);

	private static final Log logger = LogFactory.getLog(ReadModelSchema.class);

	private final CqlSession session;

	private final CassandraConverter converter;

	public ReadModelSchema(CqlSession session, CassandraConverter converter) {
		this.session = session;
		this.converter = converter;
	}

	@Override
	public void afterPropertiesSet() {
		SchemaFactory schema = new SchemaFactory(this.converter);
		for (Class<?> type : ENTITIES) {
			CassandraPersistentEntity<?> entity = this.converter.getMappingContext().getRequiredPersistentEntity(type);
			String cql = CqlGenerator.toCql(schema.getCreateTableSpecificationFor(entity).ifNotExists());
			createAndAwaitAgreement(this.session, cql);
		}
	}

	/**
	 * @param session the session
	 * @param cql a schema statement
	 */
	static void createAndAwaitAgreement(CqlSession session, String cql) {
		ResultSet result = session.execute(SimpleStatement.newInstance(cql).setTimeout(SCHEMA_TIMEOUT));
		if (result.getExecutionInfo().isSchemaInAgreement()) {
			return;
		}
		// The driver waited its own (short) agreement timeout; keep asking, as long as a schema change may take.
		long deadline = System.nanoTime() + AGREEMENT_TIMEOUT.toNanos();
		logger.info("Waiting for the Cassandra nodes to agree on the schema after: " + cql);
		while (!session.checkSchemaAgreement()) {
			if (System.nanoTime() > deadline) {
				throw new IllegalStateException("The nodes did not agree on the schema within " + AGREEMENT_TIMEOUT
						+ " after: " + cql);
			}
			pause();
		}
	}

	private static void pause() {
		try {
			Thread.sleep(200);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while waiting for schema agreement", ex);
		}
	}

}
