package io.cassandrajournal.benchmarks;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The seconds-long smoke version of the benchmark, so the benchmark code keeps working. It measures nothing
 * worth reporting.
 */
class BenchmarkSmokeIT {

	@Test
	void everyWorkloadRunsAndTheReportIsWritten() throws Exception {
		Path output = Path.of("target", "smoke-results");
		List<Result> results = BenchmarkMain.run(Bench.Sizes.smoke(), null, "datacenter1", output);
		assertThat(results).extracting(Result::name)
			.contains("append-lwt-1", "append-lwt-10", "append-nolwt-1", "append-nolwt-1-cheapest", "append-latency", "append-tagged", "append-tagged-sliced", "replay-100k", "replay-100k-upcast", "tag-walk", "tag-walk-bucketed",
					"projection", "end-to-end-push", "end-to-end-poll", "end-to-end-push-loaded", "projection-shared-3", "projection-shared-reads-3",
					"projection-shared-hour-reads-3", "projection-failover", "scaling-1", "scaling-256");
		// Disk freed with the default gc_grace_seconds keeps every tombstone: at the smoke's size (about 0.1 MB of data)
		// the tombstones can outweigh the rows they shadow, so that one figure may be negative (it was, -0.0005 MB).
		assertThat(results).extracting(Result::name).contains("cleanup");
		assertThat(results).filteredOn((r) -> !r.name().equals("cleanup-disk-freed"))
			.allSatisfy((r) -> assertThat(r.ours()).isPositive());
		// The rows whose other side is not the raw driver doing the same work are labelled price rows.
		assertThat(results).filteredOn((r) -> Result.PRICE.equals(r.kind())).extracting(Result::name)
			.containsExactlyInAnyOrder("append-nolwt-1-cheapest", "replay-100k-upcast", "replay-100k-upcast-tree");
		String json = Files.readString(output.resolve("latest.json"));
		assertThat(json).contains("\"ratio\"", "protocol_version", "heap_used_mb_ours", "ours_min_median_max",
				"\"other_side\" : \"ours without upcasters\"");
		assertThat(output.resolve("scaling.svg")).exists();
		assertThat(output.resolve("latency.svg")).exists();
	}

}
