package io.cassandrajournal.spring.boot.projection;

/**
 * A {@link ProjectionHandler} declaration that cannot work. The message names the bean, the method and
 * what to change.
 */
public class ProjectionDeclarationException extends IllegalStateException {

	private static final long serialVersionUID = 1L;

	private final String beanName;

	private final String method;

	public ProjectionDeclarationException(String beanName, String method, String problem) {
		super("@ProjectionHandler on " + beanName + "." + method + ": " + problem);
		this.beanName = beanName;
		this.method = method;
	}

	/** @return the bean declaring the handler */
	public String beanName() {
		return this.beanName;
	}

	/** @return the method */
	public String method() {
		return this.method;
	}

}
