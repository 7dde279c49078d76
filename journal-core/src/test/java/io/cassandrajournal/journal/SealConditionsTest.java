package io.cassandrajournal.journal;

import java.lang.reflect.Proxy;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.datastax.oss.driver.api.core.context.DriverContext;
import com.datastax.oss.driver.api.core.retry.RetryPolicy;
import com.datastax.oss.driver.api.core.time.TimestampGenerator;
import com.datastax.oss.driver.internal.core.retry.DefaultRetryPolicy;
import org.junit.jupiter.api.Test;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.internal.SealConditions;

import static org.assertj.core.api.Assertions.assertThat;

/** When readers may seal crash gaps (docs/reliability.md, finding 15, items 2 and 9; finding 21, item 2). */
class SealConditionsTest {

	private final CassandraJournalOptions options = CassandraJournalOptions.create().withKeyspace("ks");

	@Test
	void onlyQuorumClassLevelsOverlap() {
		Set<DefaultConsistencyLevel> overlapping = EnumSet.noneOf(DefaultConsistencyLevel.class);
		for (DefaultConsistencyLevel level : DefaultConsistencyLevel.values()) {
			if (!level.isSerial() && SealConditions.overlapping(level)) {
				overlapping.add(level);
			}
		}
		assertThat(overlapping).containsExactlyInAnyOrder(DefaultConsistencyLevel.QUORUM,
				DefaultConsistencyLevel.LOCAL_QUORUM, DefaultConsistencyLevel.EACH_QUORUM, DefaultConsistencyLevel.ALL);
	}

	@Test
	void theDriversDefaultRetryPolicyAllowsSealing() {
		CqlSession session = session((context) -> Map.of("default", new DefaultRetryPolicy(context, "default")));
		assertThat(SealConditions.unsafe(session, this.options)).isNull();
		assertThat(SealConditions.hold(session, this.options)).isTrue();
	}

	@Test
	void anotherRetryPolicyInAnyProfilePreventsSealing() {
		RetryPolicy downgrading = (RetryPolicy) Proxy.newProxyInstance(RetryPolicy.class.getClassLoader(),
				new Class<?>[] { RetryPolicy.class }, (proxy, method, args) -> null);
		CqlSession session = session((context) -> Map.of("default", new DefaultRetryPolicy(context, "default"),
				"analytics", downgrading));
		assertThat(SealConditions.unsafe(session, this.options)).contains("retry policy")
			.contains("'analytics'")
			.contains("advanced.retry-policy.class");
		assertThat(SealConditions.hold(session, this.options)).isFalse();
	}

	/** A session whose context has the given retry policies and a client-side time stamp generator. */
	private static CqlSession session(java.util.function.Function<DriverContext, Map<String, RetryPolicy>> policies) {
		TimestampGenerator clientSide = new TimestampGenerator() {
			@Override
			public long next() {
				return System.currentTimeMillis() * 1000;
			}

			@Override
			public void close() {
			}
		};
		DriverContext[] self = new DriverContext[1];
		self[0] = (DriverContext) Proxy.newProxyInstance(DriverContext.class.getClassLoader(),
				new Class<?>[] { DriverContext.class }, (proxy, method, args) -> switch (method.getName()) {
					case "getSessionName" -> "test";
					case "getTimestampGenerator" -> clientSide;
					case "getRetryPolicies" -> policies.apply(self[0]);
					default -> throw new UnsupportedOperationException(method.getName());
				});
		return (CqlSession) Proxy.newProxyInstance(CqlSession.class.getClassLoader(), new Class<?>[] { CqlSession.class },
				(proxy, method, args) -> {
					if (method.getName().equals("getContext")) {
						return self[0];
					}
					throw new UnsupportedOperationException(method.getName());
				});
	}

}
