package io.cassandrajournal.launcher.internal;

import java.io.File;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.cassandrajournal.launcher.CommitLogMode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The child JVM's classpath is found at run time in the local Maven repository of the machine that runs the
 * launcher (fetched when missing), never taken from paths recorded on the machine that built it.
 */
class JvmCommandTest {

	private String savedRepo;

	private String savedRemote;

	@BeforeEach
	void save() {
		this.savedRepo = System.getProperty("maven.repo.local");
		this.savedRemote = System.getProperty("cassandra.launcher.maven.repository");
	}

	@AfterEach
	void restore() {
		restore("maven.repo.local", this.savedRepo);
		restore("cassandra.launcher.maven.repository", this.savedRemote);
	}

	@Test
	void classpathComesFromTheLocalRepositoryOfThisMachineAndMissingJarsAreFetched(@TempDir Path otherRepo,
			@TempDir Path nodeDir) {
		Path buildRepo = Path.of(System.getProperty("maven.repo.local",
				System.getProperty("user.home") + "/.m2/repository"));
		try (FakeMavenRemote remote = new FakeMavenRemote(buildRepo)) {
			System.setProperty("maven.repo.local", otherRepo.toString());
			System.setProperty("cassandra.launcher.maven.repository", remote.uri().toString());

			List<String> command = JvmCommand.build(spec(nodeDir));

			List<String> classpath = Arrays.asList(command.get(command.indexOf("-cp") + 1).split(File.pathSeparator));
			assertThat(classpath).hasSizeGreaterThan(50);
			assertThat(classpath).as("every entry is in this machine's repository or the node's own directory")
				.allSatisfy((entry) -> assertThat(Path.of(entry).startsWith(otherRepo)
						|| Path.of(entry).startsWith(nodeDir)).as(entry).isTrue());
			assertThat(classpath).anySatisfy((entry) -> assertThat(entry).contains("cassandra-all-"));
			assertThat(classpath).allSatisfy((entry) -> assertThat(Path.of(entry)).exists());
			assertThat(remote.gets()).as("jars fetched from the remote").hasSize(classpath.size() - 1);
		}
	}

	@Test
	void aNodeGivenFewerCoresSizesItsThreadPoolsForThem(@TempDir Path nodeDir) {
		assertThat(JvmCommand.build(spec(nodeDir, 1))).contains("-XX:ActiveProcessorCount=1");
		assertThat(JvmCommand.build(spec(nodeDir, 0))).noneMatch((option) -> option.contains("ActiveProcessorCount"));
	}

	static NodeSpec spec(Path dir) {
		return spec(dir, 0);
	}

	static NodeSpec spec(Path dir, int processors) {
		return new NodeSpec("test", "127.0.0.1", 9042, 7000, "127.0.0.1:7000", "0", dir, true, "256m", "512m",
				CommitLogMode.PERIODIC, Duration.ofSeconds(1), false, Duration.ofMinutes(1),
				JavaRuntime.resolveJavaExecutable(), null, true, processors);
	}

	private static void restore(String key, String value) {
		if (value == null) {
			System.clearProperty(key);
		}
		else {
			System.setProperty(key, value);
		}
	}

}
