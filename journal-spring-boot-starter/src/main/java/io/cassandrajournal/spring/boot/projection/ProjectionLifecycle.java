package io.cassandrajournal.spring.boot.projection;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.context.SmartLifecycle;

import io.cassandrajournal.projection.Projection;
import io.cassandrajournal.projection.ProjectionControl;
import io.cassandrajournal.projection.ProjectionEngine;
import io.cassandrajournal.projection.ProjectionSettings;
import io.cassandrajournal.serialization.EventSerializer;

/**
 * Finds the {@link ProjectionHandler} methods once every singleton exists (a bad declaration fails the
 * start-up there), registers them with the {@link ProjectionEngine}, starts those marked
 * {@code autoStartup} when the context starts, and stops every projection gracefully when it stops: the
 * event in hand is finished and the cursor stored. The engine owns its threads; none is started here before
 * {@link #start()}.
 */
public class ProjectionLifecycle implements SmartLifecycle, SmartInitializingSingleton {

	private static final Logger logger = LoggerFactory.getLogger(ProjectionLifecycle.class);

	private final ProjectionEngine engine;

	private final ConfigurableListableBeanFactory beanFactory;

	private final EventSerializer serializer;

	private final ProjectionSettings defaults;

	private final @Nullable MeterRegistry meters;

	private final @Nullable InMemoryCursors inMemoryCursors;

	private final List<ProjectionControl> autoStart = new ArrayList<>();

	private volatile boolean running;

	public ProjectionLifecycle(ProjectionEngine engine, ConfigurableListableBeanFactory beanFactory,
			EventSerializer serializer, ProjectionSettings defaults, @Nullable MeterRegistry meters) {
		this(engine, beanFactory, serializer, defaults, meters, null);
	}

	/**
	 * @param engine the engine the projections are registered with
	 * @param beanFactory where {@link ProjectionHandler} methods are found
	 * @param serializer reads payloads
	 * @param defaults the settings a declaration does not override
	 * @param meters where handler timings go, if anywhere
	 * @param inMemoryCursors the cursors of {@code rebuildOnStart} projections: the engine's offset store must be
	 * {@link InMemoryCursors#around(io.cassandrajournal.projection.OffsetStore) wrapped} by it; {@code null} when
	 * the engine is the application's own (a {@code rebuildOnStart} projection then fails start-up)
	 */
	public ProjectionLifecycle(ProjectionEngine engine, ConfigurableListableBeanFactory beanFactory,
			EventSerializer serializer, ProjectionSettings defaults, @Nullable MeterRegistry meters,
			@Nullable InMemoryCursors inMemoryCursors) {
		this.engine = engine;
		this.beanFactory = beanFactory;
		this.serializer = serializer;
		this.defaults = defaults;
		this.meters = meters;
		this.inMemoryCursors = inMemoryCursors;
	}

	@Override
	public void afterSingletonsInstantiated() {
		for (ProjectionDeclaration declaration : ProjectionHandlerMethods.discover(this.beanFactory, this.defaults)) {
			MethodDispatchingHandler handler = new MethodDispatchingHandler(declaration, this.beanFactory, this.serializer,
					this.meters);
			Projection<String> projection = new Projection<>(declaration.name(), declaration.tagFilter(),
					declaration.persistenceId(), String.class, handler, declaration.settings());
			if (declaration.rebuildOnStart()) {
				if (this.inMemoryCursors == null || !this.inMemoryCursors.inUse()) {
					HandlerMethod first = declaration.methods().get(0);
					throw new ProjectionDeclarationException(first.beanName(), first.method().getName(),
							"rebuildOnStart needs the auto-configured ProjectionEngine (its offset store keeps the cursor in "
									+ "memory); with your own engine, give it InMemoryCursors.around(yourOffsetStore) and "
									+ "pass the InMemoryCursors to ProjectionLifecycle. With journal.cassandra.projections.sharing"
									+ ".enabled=true it is not available: a shared projection's cursor is fenced in Cassandra");
				}
				this.inMemoryCursors.keep(projection.id());
			}
			ProjectionControl control = this.engine.register(projection);
			if (declaration.autoStartup()) {
				this.autoStart.add(control);
			}
			logger.info("Projection {} reads {} with {} handler method(s){}", control.id(), declaration.source(),
					declaration.methods().size(), declaration.rebuildOnStart()
							? "; rebuilt from the beginning on every start (cursor in memory)" : "");
		}
	}

	@Override
	public void start() {
		for (ProjectionControl control : this.autoStart) {
			control.start();
		}
		this.running = true;
	}

	@Override
	public void stop() {
		try {
			this.engine.stopAll().toCompletableFuture().get(30, TimeUnit.SECONDS);
		}
		catch (Exception ex) {
			logger.warn("Projections did not stop within 30 s", ex);
		}
		this.running = false;
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	@Override
	public int getPhase() {
		// Start after everything else (the web server included), stop before.
		return SmartLifecycle.DEFAULT_PHASE;
	}

}
