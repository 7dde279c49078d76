package io.cassandrajournal.launcher.internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.time.Duration;
import java.time.Instant;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

class NodeDirectoriesTest {

	@TempDir
	Path tmp;

	@Test
	void theTemporaryRootIsPerUserAndOnlyTheUsersOwn() throws IOException {
		Path root = NodeDirectories.temporaryRoot(this.tmp, "alice");
		assertThat(root.getFileName().toString()).isEqualTo("cassandra-launcher-alice");
		Path node = NodeDirectories.newTemporary(root, "node-");
		assertThat(node.getParent()).isEqualTo(root);
		assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(root))).isEqualTo("rwx------");
	}

	@Test
	void anExistingRootOfOursLosesGroupAndOtherPermissions() throws IOException {
		Path root = Files.createDirectory(this.tmp.resolve("cassandra-launcher-bob"),
				PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxrwxrwx")));
		Files.setPosixFilePermissions(root, PosixFilePermissions.fromString("rwxrwxrwx"));
		NodeDirectories.newTemporary(root, "node-");
		assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(root))).isEqualTo("rwx------");
	}

	@Test
	void aSymbolicLinkInPlaceOfTheRootIsRefused() throws IOException {
		Path elsewhere = Files.createDirectory(this.tmp.resolve("elsewhere"));
		Path root = Files.createSymbolicLink(this.tmp.resolve("cassandra-launcher-carol"), elsewhere);
		assertThatIllegalStateException().isThrownBy(() -> NodeDirectories.newTemporary(root, "node-"))
			.withMessageContaining("symbolic link")
			.withMessageContaining(root.toString());
		try (var listing = Files.list(elsewhere)) {
			assertThat(listing).as("nothing written through the link").isEmpty();
		}
	}

	@Test
	void theSweepLeavesOtherUsersDirectoriesAndLinksAlone() throws IOException {
		Path root = NodeDirectories.temporaryRoot(this.tmp, "dave");
		NodeDirectories.ensurePrivateRoot(root);
		Path stale = old(Files.createDirectory(root.resolve("node-stale")));
		Path victim = Files.createDirectory(this.tmp.resolve("victim"));
		Files.writeString(victim.resolve("keep.txt"), "precious");
		Path link = Files.createSymbolicLink(root.resolve("node-link"), victim);
		Path foreign = old(Files.createDirectory(root.resolve("node-foreign")));
		boolean chowned = chownToNobody(foreign);
		old(foreign);

		NodeDirectories.sweepStale(root);

		assertThat(stale).as("our own stale directory is swept").doesNotExist();
		assertThat(Files.exists(link, LinkOption.NOFOLLOW_LINKS)).as("a link is not followed nor deleted").isTrue();
		assertThat(victim.resolve("keep.txt")).hasContent("precious");
		if (chowned) {
			assertThat(foreign).as("another user's directory is left alone").exists();
		}
	}

	@Test
	void aRootThatBelongsToAnotherUserIsRefused() throws IOException {
		Path root = Files.createDirectory(this.tmp.resolve("cassandra-launcher-erin"),
				PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
		Assumptions.assumeTrue(chownToNobody(root), "giving a directory to 'nobody' needs root");
		assertThatIllegalStateException().isThrownBy(() -> NodeDirectories.newTemporary(root, "node-"))
			.withMessageContaining("belongs to nobody")
			.withMessageContaining(root.toString());
	}

	private static Path old(Path dir) throws IOException {
		Files.setLastModifiedTime(dir, FileTime.from(Instant.now().minus(Duration.ofHours(1))));
		return dir;
	}

	/** Only root can give a file away; elsewhere the callers skip only the assertions that need it. */
	private static boolean chownToNobody(Path dir) {
		try {
			UserPrincipal nobody = dir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody");
			Files.setOwner(dir, nobody);
			return true;
		}
		catch (IOException | UnsupportedOperationException ex) {
			return false;
		}
	}

}
