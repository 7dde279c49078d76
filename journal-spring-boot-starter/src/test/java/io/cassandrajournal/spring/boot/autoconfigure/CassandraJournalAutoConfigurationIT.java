package io.cassandrajournal.spring.boot.autoconfigure;

import java.net.InetSocketAddress;
import java.time.Duration;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.cassandra.autoconfigure.CassandraAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.inmemory.InMemoryJournal;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.Journal;
import io.cassandrajournal.projection.ProjectionEngine;
import io.cassandrajournal.query.CassandraReadJournal;
import io.cassandrajournal.serialization.EventSerializer;
import io.cassandrajournal.serialization.EventUpcaster;
import io.cassandrajournal.serialization.Upcasters;
import io.cassandrajournal.snapshot.SnapshotStore;
import io.cassandrajournal.state.DurableStateStore;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The auto-configuration against a real node: defaults, property mapping, back-off, switches.
 */
@CassandraTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CassandraJournalAutoConfigurationIT {

	private ApplicationContextRunner runner;

	private String contactPoint;

	@BeforeAll
	void runner(TestKeyspace keyspace) {
		InetSocketAddress point = keyspace.contactPoints().get(0);
		this.contactPoint = point.getHostString() + ":" + point.getPort();
		this.runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(CassandraAutoConfiguration.class,
					CassandraJournalAutoConfiguration.class, JournalProjectionsAutoConfiguration.class))
			.withPropertyValues("spring.cassandra.contact-points=" + this.contactPoint,
					"spring.cassandra.local-datacenter=datacenter1", "journal.cassandra.keyspace=" + keyspace.name(),
					"journal.cassandra.use-tag-index=true");
	}

	@Test
	void defaultsUseTheApplicationsSessionAndReferenceDefaults() {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context).hasSingleBean(CassandraJournal.class)
				.hasSingleBean(SnapshotStore.class)
				.hasSingleBean(DurableStateStore.class)
				.hasSingleBean(CassandraReadJournal.class)
				.hasSingleBean(ProjectionEngine.class)
				.hasSingleBean(io.cassandrajournal.entity.EntityRepositories.class)
				.hasSingleBean(CqlSession.class);
			io.cassandrajournal.entity.EntityRepositories repositories = context
				.getBean(io.cassandrajournal.entity.EntityRepositories.class);
			assertThat(repositories.maxRetries()).isEqualTo(3);
			assertThat(repositories.cacheSize()).isEqualTo(1000);
			assertThat(context.getBean(JournalSession.class).isOwned()).isFalse();
			CassandraJournalOptions options = context.getBean(CassandraJournalOptions.class);
			assertThat(options.eventsTable()).isEqualTo("events");
			assertThat(options.metadataTable()).isEqualTo("metadata");
			assertThat(options.allIdsTable()).isEqualTo("all_persistence_ids");
			assertThat(options.tagIndexTable()).isEqualTo("events_by_tag");
			assertThat(options.partitionSize()).isEqualTo(500_000);
			assertThat(options.autoCreateTables()).isTrue();
			assertThat(options.consistency()).isEqualTo(DefaultConsistencyLevel.LOCAL_QUORUM);
			assertThat(options.lightweightTransactions()).isTrue();
			assertThat(options.serialConsistency()).isEmpty();
		});
	}

	@Test
	void everyPropertyIsMapped() {
		this.runner.withPropertyValues("journal.cassandra.contact-points=" + this.contactPoint,
				"journal.cassandra.local-datacenter=datacenter1", "journal.cassandra.events-table=my_events",
				"journal.cassandra.metadata-table=my_metadata", "journal.cassandra.all-ids-table=my_ids",
				"journal.cassandra.tag-index-table=my_tags", "journal.cassandra.tag-bucketing=hour",
				"journal.cassandra.snapshots-table=my_snapshots",
				"journal.cassandra.durable-state-table=my_state", "journal.cassandra.partition-size=1000",
				"journal.cassandra.consistency=6", "journal.cassandra.serial-consistency=9",
				"journal.cassandra.lightweight-transactions=true", "journal.cassandra.persistence-id-buckets=4",
				"journal.cassandra.page-size=250", "journal.cassandra.request-timeout=7s", "journal.cassandra.startup-wait=45s",
				"journal.cassandra.in-flight-wait=5s",
				"journal.cassandra.projections.concurrency=3",
				"journal.cassandra.entities.max-retries=5", "journal.cassandra.entities.cache-size=50",
				"journal.cassandra.projections.poll-interval=250ms", "journal.cassandra.projections.max-retries=7",
				"journal.cassandra.projections.recovery-strategy=retry-and-skip",
				"journal.cassandra.projections.backtrack-window=3s",
				"journal.cassandra.projections.dead-letter-table=my_dead_letters")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				CassandraJournalOptions options = context.getBean(CassandraJournalOptions.class);
				assertThat(options.contactPoints()).containsExactly(this.contactPoint);
				assertThat(options.localDatacenter()).hasValue("datacenter1");
				assertThat(options.eventsTable()).isEqualTo("my_events");
				assertThat(options.metadataTable()).isEqualTo("my_metadata");
				assertThat(options.allIdsTable()).isEqualTo("my_ids");
				assertThat(options.tagIndexTable()).isEqualTo("my_tags");
				assertThat(options.tagBucketing()).isEqualTo(io.cassandrajournal.TagBucketing.HOUR);
				assertThat(options.tagIndexDataTable()).isEqualTo("my_tags_hour");
				assertThat(options.snapshotsTable()).isEqualTo("my_snapshots");
				assertThat(options.durableStateTable()).isEqualTo("my_state");
				assertThat(options.partitionSize()).isEqualTo(1000);
				assertThat(options.consistency()).as("numeric code 6").isEqualTo(DefaultConsistencyLevel.LOCAL_QUORUM);
				assertThat(options.serialConsistency()).as("numeric code 9").hasValue(DefaultConsistencyLevel.LOCAL_SERIAL);
				assertThat(options.persistenceIdBuckets()).isEqualTo(4);
				assertThat(options.pageSize()).isEqualTo(250);
				assertThat(options.requestTimeout()).isEqualTo(Duration.ofSeconds(7));
				assertThat(options.startupWait()).isEqualTo(Duration.ofSeconds(45));
				assertThat(options.inFlightWait()).isEqualTo(Duration.ofSeconds(5));
				assertThat(context.getBean(JournalSession.class).isOwned()).as("own session with contact points").isTrue();
				io.cassandrajournal.projection.ProjectionSettings defaults = context
					.getBean(io.cassandrajournal.projection.ProjectionSettings.class);
				assertThat(defaults.pollInterval()).isEqualTo(Duration.ofMillis(250));
				assertThat(defaults.maxRetries()).isEqualTo(7);
				assertThat(defaults.concurrency()).isEqualTo(3);
				io.cassandrajournal.entity.EntityRepositories repositories = context
					.getBean(io.cassandrajournal.entity.EntityRepositories.class);
				assertThat(repositories.maxRetries()).isEqualTo(5);
				assertThat(repositories.cacheSize()).isEqualTo(50);
				assertThat(defaults.recoveryStrategy())
					.isEqualTo(io.cassandrajournal.projection.RecoveryStrategy.RETRY_AND_SKIP);
				assertThat(defaults.feed().backtrackWindow()).isEqualTo(Duration.ofSeconds(3));
				assertThat(context.getBean(JournalSession.class)
					.session()
					.getMetadata()
					.getKeyspace(options.requireKeyspace())
					.flatMap((ks) -> ks.getTable("my_dead_letters"))).as("the dead-letter table it created").isPresent();
			});
	}

	@Test
	void theSameLayoutStartsAgainAndADifferentOneFailsWithAReportNamingBothValues() {
		ApplicationContextRunner layout = this.runner.withPropertyValues("journal.cassandra.events-table=layout_events",
				"journal.cassandra.partition-size=1000");
		layout.run((context) -> assertThat(context).hasNotFailed());
		layout.run((context) -> assertThat(context).as("same settings, second start").hasNotFailed());
		layout.withPropertyValues("journal.cassandra.partition-size=2000", "journal.cassandra.use-tag-index=false")
			.run((context) -> {
				assertThat(context).hasFailed();
				FailureAnalysis analysis = new JournalLayoutFailureAnalyzer().analyze(context.getStartupFailure());
				assertThat(analysis).as("reported by the failure analyzer").isNotNull();
				assertThat(analysis.getDescription())
					.contains("journal.cassandra.partition-size is 2000 here but the journal was first started with 1000")
					.contains("journal.cassandra.use-tag-index is false here but the journal was first started with true");
				assertThat(analysis.getAction()).contains("stop every instance").contains("layout_events_layout");
			});
	}

	@Test
	void projectionSwitches() {
		this.runner.run((context) -> assertThat(context).hasSingleBean(ProjectionEngine.class)
			.hasSingleBean(io.cassandrajournal.projection.DeadLetterQueue.class));
		this.runner.withPropertyValues("journal.cassandra.projections.dead-letter-queue=false")
			.run((context) -> assertThat(context).hasSingleBean(ProjectionEngine.class)
				.doesNotHaveBean(io.cassandrajournal.projection.DeadLetterQueue.class));
		this.runner.withPropertyValues("journal.cassandra.projections.enabled=false")
			.run((context) -> assertThat(context).hasSingleBean(Journal.class).doesNotHaveBean(ProjectionEngine.class));
	}

	@Configuration(proxyBeanMethods = false)
	static class UserJournal {

		@Bean
		Journal myJournal() {
			return new InMemoryJournal();
		}

	}

	@Test
	void userBeansWin() {
		this.runner.withUserConfiguration(UserJournal.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context).hasSingleBean(Journal.class).doesNotHaveBean(CassandraJournal.class);
			assertThat(context.getBean(Journal.class)).isInstanceOf(InMemoryJournal.class);
			assertThat(context.getBean(io.cassandrajournal.entity.EntityRepositories.class).create(
					new io.cassandrajournal.spring.boot.projection.TestEntity())).as("repositories over the user's journal")
				.isNotNull();
		});
		io.cassandrajournal.entity.EntityRepositories mine = new io.cassandrajournal.entity.EntityRepositories(
				new InMemoryJournal(), null, 0, 0);
		this.runner.withBean(io.cassandrajournal.entity.EntityRepositories.class, () -> mine).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(io.cassandrajournal.entity.EntityRepositories.class)).isSameAs(mine);
		});
	}

	@Test
	void theSwitchTurnsEverythingOff() {
		this.runner.withPropertyValues("journal.cassandra.enabled=false").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context).doesNotHaveBean(CassandraJournalOptions.class)
				.doesNotHaveBean(Journal.class)
				.doesNotHaveBean(ProjectionEngine.class);
		});
	}

	@Test
	void backsOffWithoutTheDriver() {
		this.runner.withClassLoader(new FilteredClassLoader(CqlSession.class)).run((context) -> {
			assertThat(context).doesNotHaveBean(CassandraJournalOptions.class).doesNotHaveBean(Journal.class);
		});
	}

	@Test
	void badPropertiesFailWithAMessageThatSaysWhatToChange() {
		this.runner.withPropertyValues("journal.cassandra.events-table=events; DROP TABLE x").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.hasMessageContaining("eventsTable must be a plain CQL identifier");
		});
		this.runner.withPropertyValues("journal.cassandra.consistency=11").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("Unknown consistency level code 11");
		});
		this.runner.withPropertyValues("journal.cassandra.entities.cache-size=-1").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.hasMessageContaining("journal.cassandra.entities.max-retries and cache-size must be 0 or more");
		});
		this.runner.withPropertyValues("journal.cassandra.keyspace=missing_keyspace").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.hasMessageContaining("Keyspace 'missing_keyspace' does not exist");
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class RenamingUpcasters {

		@Bean
		EventUpcaster creditedV1() {
			return EventUpcaster.of("credited", 1, (event) -> event.put("kind", "deposited"));
		}

		@Bean
		EventUpcaster depositedV2() {
			return EventUpcaster.of("deposited", 2, (event) -> event.put("note", "v3"));
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class GappedUpcasters {

		@Bean
		EventUpcaster depositedV1() {
			return EventUpcaster.of("deposited", 1, (event) -> event);
		}

		@Bean
		EventUpcaster depositedV3() {
			return EventUpcaster.of("deposited", 3, (event) -> event);
		}

	}

	@Test
	void upcasterBeansJoinTheSerializersChainsAndAGapFailsStartUp() {
		this.runner.withUserConfiguration(RenamingUpcasters.class).run((context) -> {
			assertThat(context).hasNotFailed().hasSingleBean(Upcasters.class);
			EventSerializer serializer = context.getBean(EventSerializer.class);
			assertThat(serializer.deserializeEvent("{\"kind\":\"credited\",\"amount\":5}", Object.class))
				.hasToString("[{kind=deposited, amount=5, note=v3}]");
			assertThat(context.getBean(CassandraJournal.class).serializer()).isSameAs(serializer);
		});
		this.runner.withUserConfiguration(GappedUpcasters.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.hasMessageContaining("kind 'deposited' has a gap")
				.hasMessageContaining("none reads version 2");
		});
		this.runner.withUserConfiguration(RenamingUpcasters.class)
			.withBean(Upcasters.class, () -> Upcasters.NONE)
			.run((context) -> assertThat(context.getBean(EventSerializer.class)
				.deserializeEvent("{\"kind\":\"credited\"}", Object.class)).hasToString("[{kind=credited}]"));
	}

}
