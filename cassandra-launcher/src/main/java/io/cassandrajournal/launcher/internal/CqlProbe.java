package io.cassandrajournal.launcher.internal;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.security.GeneralSecurityException;
import java.security.cert.X509Certificate;

import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;

/**
 * Asks a CQL port whether it speaks the native protocol: sends an {@code OPTIONS} frame (protocol v4) and
 * expects {@code SUPPORTED}. An open TCP port alone is not proof, since another process may hold it.
 */
public final class CqlProbe {

	private static final byte OPCODE_OPTIONS = 0x05;

	private static final byte OPCODE_SUPPORTED = 0x06;

	private CqlProbe() {
	}

	public static boolean answers(InetSocketAddress address, int timeoutMillis) {
		return answers(address, timeoutMillis, false);
	}

	/**
	 * @param address the CQL port
	 * @param timeoutMillis connect and read timeout
	 * @param tls whether to speak TLS first; the probe checks that the node speaks CQL, not who it is, so it
	 * accepts any certificate (it never sends anything but {@code OPTIONS})
	 * @return whether the port answers the native protocol
	 */
	public static boolean answers(InetSocketAddress address, int timeoutMillis, boolean tls) {
		try (Socket plain = new Socket()) {
			plain.connect(address, timeoutMillis);
			plain.setSoTimeout(timeoutMillis);
			Socket socket = tls ? trustingTls().getSocketFactory()
				.createSocket(plain, address.getHostString(), address.getPort(), true) : plain;
			OutputStream out = socket.getOutputStream();
			out.write(new byte[] { 0x04, 0x00, 0x00, 0x00, OPCODE_OPTIONS, 0x00, 0x00, 0x00, 0x00 });
			out.flush();
			DataInputStream in = new DataInputStream(socket.getInputStream());
			byte[] header = new byte[9];
			in.readFully(header);
			return (header[0] & 0x7F) == 0x04 && (header[0] & 0x80) != 0 && header[4] == OPCODE_SUPPORTED;
		}
		catch (IOException | GeneralSecurityException ex) {
			return false;
		}
	}

	private static SSLContext trustingTls() throws GeneralSecurityException {
		SSLContext context = SSLContext.getInstance("TLS");
		context.init(null, new TrustManager[] { new X509TrustManager() {

			@Override
			public void checkClientTrusted(X509Certificate[] chain, String authType) {
			}

			@Override
			public void checkServerTrusted(X509Certificate[] chain, String authType) {
			}

			@Override
			public X509Certificate[] getAcceptedIssuers() {
				return new X509Certificate[0];
			}

		} }, null);
		return context;
	}

	public static boolean portInUse(String host, int port) {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress(host, port), 200);
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

}
