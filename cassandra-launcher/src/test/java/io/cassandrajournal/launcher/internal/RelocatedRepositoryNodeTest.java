package io.cassandrajournal.launcher.internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

import io.cassandrajournal.launcher.CassandraNode;
import io.cassandrajournal.launcher.internal.CassandraArtifacts.Artifact;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A real node started on a machine whose local Maven repository is somewhere else than the build's (another
 * user's home, a CI cache): the launcher finds Cassandra's jars there and fetches the missing ones.
 */
class RelocatedRepositoryNodeTest {

	private static final Path BUILD_REPO = Path.of(System.getProperty("maven.repo.local",
			System.getProperty("user.home") + "/.m2/repository"));

	private String savedRepo;

	private String savedRemote;

	@BeforeEach
	void save() {
		this.savedRepo = System.getProperty("maven.repo.local");
		this.savedRemote = System.getProperty(CassandraArtifacts.REMOTE_PROPERTY);
	}

	@AfterEach
	void restore() {
		restore("maven.repo.local", this.savedRepo);
		restore(CassandraArtifacts.REMOTE_PROPERTY, this.savedRemote);
	}

	@Test
	void startsWithJarsFromAnotherRepositoryFetchingTheMissingOnes(@TempDir Path otherRepo) throws IOException {
		List<Artifact> recorded = CassandraArtifacts.recorded();
		// cassandra-all itself and two more are missing: they come from the (fake) remote
		for (Artifact artifact : recorded.subList(3, recorded.size())) {
			Path target = otherRepo.resolve(artifact.relativePath());
			Files.createDirectories(target.getParent());
			Path source = BUILD_REPO.resolve(artifact.relativePath());
			try {
				Files.createLink(target, source);
			}
			catch (IOException | UnsupportedOperationException ex) {
				Files.copy(source, target);
			}
		}
		try (FakeMavenRemote remote = new FakeMavenRemote(BUILD_REPO)) {
			System.setProperty("maven.repo.local", otherRepo.toString());
			System.setProperty(CassandraArtifacts.REMOTE_PROPERTY, remote.uri().toString());
			startAndStop();
			assertThat(remote.gets()).containsExactlyInAnyOrderElementsOf(
					recorded.subList(0, 3).stream().map(Artifact::relativePath).toList());
		}
		assertThat(otherRepo.resolve(recorded.get(0).relativePath())).exists();
	}

	/**
	 * The real thing, from an empty repository and Maven Central (about 100 jars, 70 MB): not part of the default
	 * build, which must not depend on the network. Run it with {@code -Dlauncher.test.central=true}.
	 */
	@Test
	@EnabledIfSystemProperty(named = "launcher.test.central", matches = "true")
	void startsFromAnEmptyRepositoryFetchingEverythingFromMavenCentral(@TempDir Path emptyRepo) {
		System.setProperty("maven.repo.local", emptyRepo.toString());
		System.clearProperty(CassandraArtifacts.REMOTE_PROPERTY);
		startAndStop();
		assertThat(emptyRepo.resolve(CassandraArtifacts.recorded().get(0).relativePath())).exists();
	}

	private static void startAndStop() {
		try (CassandraNode node = CassandraNode.builder().build()) {
			node.start();
			assertThat(CqlProbe.answers(node.contactPoint(), 2000)).isTrue();
		}
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
