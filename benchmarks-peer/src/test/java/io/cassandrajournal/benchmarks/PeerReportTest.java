package io.cassandrajournal.benchmarks;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

class PeerReportTest {

	private static final PeerResult APPENDS = new PeerResult("pekko-append-nolwt-1", "ops/s", List.of(900.0, 1000.0, 1100.0),
			List.of(2000.0), List.of(500.0, 400.0, 450.0), List.of(4000.0), "note");

	@TempDir
	Path dir;

	@Test
	void peerRowsGoBesideTheRunsRowsAndReplaceAnEarlierPeerRun() throws Exception {
		Path file = this.dir.resolve("latest.json");
		Files.writeString(file, """
				[ {"name": "append-nolwt-1", "ours": 1.0},
				  {"name": "pekko-replay-100k", "ours": 7.0},
				  {"name": "_environment", "unit": "info"},
				  {"name": "_peer_environment", "date": "old"} ]
				""");

		PeerReport.mergeJson(file, List.of(APPENDS), Map.of("date", "new"));

		List<Map<String, Object>> rows = JsonMapper.builder().build().readValue(file.toFile(),
				new TypeReference<List<Map<String, Object>>>() {
				});
		assertThat(rows).extracting((row) -> row.get("name"))
			.containsExactly("append-nolwt-1", "pekko-append-nolwt-1", "_environment", "_peer_environment");
		Map<String, Object> row = rows.get(1);
		assertThat(row).containsEntry("ours", 1000.0).containsEntry("raw", 2000.0).containsEntry("ratio", 0.5)
			.containsEntry("kind", "overhead").containsEntry("other_side", "raw driver, same work")
			.containsEntry("peer", 450.0).containsEntry("peer_raw", 4000.0).containsEntry("ours_to_peer", 2.22)
			.containsEntry("peer_min_median_max", List.of(400.0, 450.0, 500.0));
		assertThat(rows.get(3)).containsEntry("date", "new");
	}

	@Test
	void withoutAnEarlierRunTheFileHoldsThePeerRowsAndItsEnvironment() throws Exception {
		Path file = this.dir.resolve("results").resolve("latest.json");

		PeerReport.mergeJson(file, List.of(APPENDS), Map.of("date", "new"));

		assertThat(Files.readString(file)).contains("\"pekko-append-nolwt-1\"", "\"_peer_environment\"");
	}

	@Test
	void theChartHasABarPerSideMeasured() throws Exception {
		Path svg = this.dir.resolve("peer.svg");

		PeerReport.writeSvg(svg, List.of(APPENDS, new PeerResult("pekko-tag-walk", "events/s", List.of(1.0),
				List.of(2.0), List.of(3.0), List.of(), "note")));

		String text = Files.readString(svg);
		// 3 bars for the appends, 2 for the walk (no raw run of the peer's requests), and 3 legend boxes
		assertThat(text.split("<rect x=").length - 1).isEqualTo(3 + 2 + 3);
		assertThat(text).contains("append-nolwt-1", "tag-walk", "Pekko Persistence Cassandra");
	}

}
