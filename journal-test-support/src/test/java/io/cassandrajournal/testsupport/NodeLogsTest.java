package io.cassandrajournal.testsupport;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

class NodeLogsTest {

	@Test
	void aRunWithoutFailuresOnALiveNodeKeepsNothing() {
		assertThat(NodeLogs.reason(false, List.of())).isNull();
	}

	@Test
	void aDeadNodeOrAFailedTestSaysWhy() {
		assertThat(NodeLogs.reason(true, List.of())).contains("no longer running");
		assertThat(NodeLogs.reason(false, List.of("[class:a.BIT]: boom"))).contains("[class:a.BIT]: boom")
			.doesNotContain("no longer running");
	}

	@Test
	void theLogFilesAreCopiedWithTheReason(@TempDir Path temp) throws IOException {
		Path node = temp.resolve("node-1");
		Files.createDirectories(node.resolve("logs"));
		Files.writeString(node.resolve("logs").resolve("system.log"), "Terminating due to java.lang.OutOfMemoryError\n");
		Files.createDirectories(node.resolve("data"));
		Files.writeString(node.resolve("data").resolve("big.db"), "not a log");

		Path kept = NodeLogs.keep(node, temp.resolve("target").resolve("cassandra-node-logs"), "the node died\n");

		assertThat(kept.getParent()).isEqualTo(temp.resolve("target").resolve("cassandra-node-logs"));
		assertThat(kept.resolve("system.log")).content().contains("OutOfMemoryError");
		assertThat(kept.resolve("reason.txt")).content().contains("the node died").contains(node.toString());
		try (var files = Files.list(kept)) {
			assertThat(files.map((file) -> file.getFileName().toString())).containsExactlyInAnyOrder("system.log",
					"reason.txt");
		}
	}

}
