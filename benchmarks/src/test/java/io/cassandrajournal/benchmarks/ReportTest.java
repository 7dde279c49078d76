package io.cassandrajournal.benchmarks;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link Report}: price rows ({@link Result#price}), whose other side is not the raw driver doing the same work,
 * are labelled as such in the printed table and in {@code latest.json}, and keep the fields readers of the file
 * used before they were labelled.
 */
class ReportTest {

	private static final Result OVERHEAD = Result.of("replay-100k", "events/s", List.of(90.0, 100.0, 110.0),
			List.of(100.0, 100.0, 100.0), "note");

	private static final Result PRICE = Result.of("replay-100k-upcast-tree", "events/s", List.of(70.0, 80.0, 90.0),
			List.of(100.0, 100.0, 100.0), "note").price(ReadWorkloads.WITHOUT_UPCASTERS);

	private static final Result ALONE = new Result("end-to-end-push", "ms", 3.0, null, 3.0, 14.0, null, null, "note");

	@TempDir
	Path dir;

	@Test
	void eachRowSaysWhatItsOtherSideIs() {
		assertThat(OVERHEAD.kind()).isEqualTo(Result.OVERHEAD);
		assertThat(OVERHEAD.otherSide()).isEqualTo(Result.RAW_DRIVER);
		assertThat(PRICE.kind()).isEqualTo(Result.PRICE);
		assertThat(PRICE.otherSide()).isEqualTo("ours without upcasters");
		assertThat(PRICE.ratio()).isEqualTo(0.8);
		assertThat(ALONE.kind()).isEqualTo(Result.ALONE);
		assertThat(ALONE.otherSide()).isNull();
	}

	@Test
	void theJsonLabelsPriceRowsAndKeepsTheirRawAndRatioFields() throws Exception {
		Path file = this.dir.resolve("latest.json");

		Report.writeJson(file, List.of(OVERHEAD, PRICE, ALONE), Map.of("date", "now"));

		List<Map<String, Object>> rows = JsonMapper.builder().build().readValue(file.toFile(),
				new TypeReference<List<Map<String, Object>>>() {
				});
		assertThat(rows.get(0)).containsEntry("kind", "overhead").containsEntry("other_side", "raw driver, same work")
			.containsEntry("ratio", 1.0);
		assertThat(rows.get(1)).containsEntry("kind", "price").containsEntry("other_side", "ours without upcasters")
			.containsEntry("raw", 100.0)
			.containsEntry("ratio", 0.8)
			.containsEntry("raw_min_median_max", List.of(100.0, 100.0, 100.0))
			.containsEntry("ratio_per_round_min_median_max", List.of(0.7, 0.8, 0.9));
		assertThat(rows.get(2)).containsEntry("kind", "alone").doesNotContainKey("other_side").containsEntry("ratio", null);
		assertThat(rows.get(3)).containsEntry("name", "_environment").doesNotContainKey("kind");
	}

	@Test
	void theTablePrintsPriceRowsUnderTheirOwnHeadingNamingTheOtherSide() {
		String table = Report.table(List.of(PRICE, OVERHEAD, ALONE));

		String[] parts = table.split("prices, not overhead");
		assertThat(parts).hasSize(2);
		assertThat(parts[0]).contains("ours / raw driver doing the same work", "replay-100k ", "end-to-end-push")
			.doesNotContain("replay-100k-upcast-tree");
		assertThat(parts[1]).contains("ratio = ours / other side", "other side")
			.containsPattern("replay-100k-upcast-tree +events/s +80\\.0 +100\\.0 +0\\.80  ours without upcasters")
			.doesNotContain("end-to-end-push");
	}

	@Test
	void aTableWithoutPriceRowsHasNoPriceHeading() {
		assertThat(Report.table(List.of(OVERHEAD))).doesNotContain("prices, not overhead");
	}

}
