package io.cassandrajournal.launcher.internal;

import io.cassandrajournal.launcher.CommitLogMode;

/**
 * Renders the cassandra.yaml of one node: single token, no bootstrap, everything under the node's directory,
 * small memtables and thread pools for a 2-core machine, and the features tests never need switched off.
 */
final class CassandraYaml {

	private CassandraYaml() {
	}

	static String render(NodeSpec spec) {
		String dir = spec.directory().toAbsolutePath().toString();
		StringBuilder yaml = new StringBuilder();
		yaml.append("cluster_name: '").append(spec.clusterName()).append("'\n");
		yaml.append("num_tokens: 1\n");
		yaml.append("initial_token: ").append(spec.initialToken()).append('\n');
		yaml.append("auto_bootstrap: false\n");
		yaml.append("partitioner: org.apache.cassandra.dht.Murmur3Partitioner\n");
		yaml.append("endpoint_snitch: SimpleSnitch\n");
		yaml.append("seed_provider:\n");
		yaml.append("  - class_name: org.apache.cassandra.locator.SimpleSeedProvider\n");
		yaml.append("    parameters:\n");
		yaml.append("      - seeds: \"").append(spec.seeds()).append("\"\n");
		yaml.append("listen_address: ").append(spec.host()).append('\n');
		yaml.append("rpc_address: ").append(spec.host()).append('\n');
		yaml.append("storage_port: ").append(spec.storagePort()).append('\n');
		yaml.append("native_transport_port: ").append(spec.nativePort()).append('\n');
		yaml.append("start_native_transport: true\n");
		yaml.append("data_file_directories:\n  - ").append(dir).append("/data\n");
		yaml.append("commitlog_directory: ").append(dir).append("/commitlog\n");
		yaml.append("saved_caches_directory: ").append(dir).append("/saved_caches\n");
		yaml.append("hints_directory: ").append(dir).append("/hints\n");
		yaml.append("cdc_raw_directory: ").append(dir).append("/cdc_raw\n");
		if (spec.commitLogMode() == CommitLogMode.BATCH_SKIP_SYNC) {
			yaml.append("commitlog_sync: batch\n");
		}
		else {
			yaml.append("commitlog_sync: periodic\n");
			yaml.append("commitlog_sync_period: 10000ms\n");
		}
		yaml.append("commitlog_segment_size: 8MiB\n");
		yaml.append("commitlog_total_space: 256MiB\n");
		yaml.append("concurrent_reads: 8\n");
		yaml.append("concurrent_writes: 8\n");
		yaml.append("concurrent_counter_writes: 8\n");
		yaml.append("concurrent_compactors: 1\n");
		yaml.append("memtable_heap_space: 128MiB\n");
		yaml.append("auto_snapshot: false\n");
		yaml.append("paxos_variant: v2\n");
		yaml.append("user_defined_functions_enabled: false\n");
		yaml.append("materialized_views_enabled: false\n");
		yaml.append("sasi_indexes_enabled: false\n");
		yaml.append("authenticator: ")
			.append(spec.passwordAuthentication() ? "PasswordAuthenticator" : "AllowAllAuthenticator")
			.append('\n');
		yaml.append("authorizer: AllowAllAuthorizer\n");
		if (spec.clientEncryption() != null) {
			yaml.append("client_encryption_options:\n");
			yaml.append("  enabled: true\n");
			yaml.append("  optional: false\n");
			yaml.append("  keystore: ").append(spec.clientEncryption().keystore().toAbsolutePath()).append('\n');
			yaml.append("  keystore_password: \"").append(spec.clientEncryption().password().replace("\"", "\\\"")).append("\"\n");
			yaml.append("  require_client_auth: false\n");
		}
		return yaml.toString();
	}

	static String logback() {
		return """
				<configuration scan="false">
				  <appender name="STDOUT" class="ch.qos.logback.core.ConsoleAppender">
				    <encoder>
				      <pattern>%-5level [%thread] %date{ISO8601} %F:%L - %msg%n</pattern>
				    </encoder>
				  </appender>
				  <logger name="org.apache.cassandra" level="INFO"/>
				  <logger name="com.datastax" level="WARN"/>
				  <root level="WARN">
				    <appender-ref ref="STDOUT"/>
				  </root>
				</configuration>
				""";
	}

}
