package io.cassandrajournal.launcher.internal;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The child's entry point is copied alone into the node's directory (the launcher's own jar may be nested in a
 * Spring Boot fat jar, which a plain JVM cannot read), so it must run from its class file alone.
 */
class ChildMainTest {

	@Test
	void theClassFileNamesNoOtherClassOfTheLauncher(@TempDir Path node) throws Exception {
		Path root = JvmCommand.installChildMain(node);
		String classFile = new String(
				Files.readAllBytes(root.resolve("io/cassandrajournal/launcher/internal/ChildMain.class")),
				StandardCharsets.ISO_8859_1);
		Matcher references = Pattern.compile("io/cassandrajournal/launcher/[A-Za-z/$]*").matcher(classFile);
		while (references.find()) {
			assertThat(references.group()).isEqualTo("io/cassandrajournal/launcher/internal/ChildMain");
		}
	}

	@Test
	void runsFromTheCopiedClassFileAloneAndHandsOverToCassandra(@TempDir Path node) throws Exception {
		Path root = JvmCommand.installChildMain(node);
		Path out = node.resolve("out.txt");
		Process child = new ProcessBuilder(JavaRuntime.resolveJavaExecutable().toString(), "-cp", root.toString(),
				ChildMain.class.getName())
			.redirectErrorStream(true)
			.redirectOutput(out.toFile())
			.start();
		assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
		// Cassandra is not on this classpath: getting as far as looking for its daemon proves the entry point ran.
		assertThat(Files.readString(out)).doesNotContain("Could not find or load main class")
			.contains("ClassNotFoundException: org.apache.cassandra.service.CassandraDaemon");
	}

}
