package io.cassandrajournal.benchmarks;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The seconds-long smoke version of the peer run, so its code keeps working against the plugin: every side of
 * every peer workload runs and reads back what it wrote. It measures nothing worth reporting.
 */
class PeerSmokeIT {

	@Test
	void everyPeerWorkloadRunsAndItsRowsAreWritten() throws Exception {
		Path output = Path.of("target", "peer-smoke-results");
		Files.createDirectories(output);
		Files.writeString(output.resolve("latest.json"), "[ {\"name\": \"tag-walk\", \"ours\": 1.0} ]");

		List<PeerResult> results = PeerMain.run(Bench.Sizes.smoke(), output);

		assertThat(results).extracting(PeerResult::name)
			.containsExactly("pekko-append-nolwt-1", "pekko-append-nolwt-10", "pekko-replay-100k", "pekko-tag-walk");
		assertThat(results).allSatisfy((r) -> {
			assertThat(r.ours()).isNotEmpty().allSatisfy((v) -> assertThat(v).isPositive());
			assertThat(r.raw()).isNotEmpty().allSatisfy((v) -> assertThat(v).isPositive());
			assertThat(r.peer()).isNotEmpty().allSatisfy((v) -> assertThat(v).isPositive());
		});
		String json = Files.readString(output.resolve("latest.json"));
		assertThat(json).contains("\"tag-walk\"", "\"pekko-tag-walk\"", "\"peer\"", "\"ours_to_peer\"",
				"\"_peer_environment\"", "protocol_versions_of_all_connections");
		assertThat(output.resolve("peer.svg")).exists();
	}

}
