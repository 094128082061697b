// Runs DynamoDB Local listening on 127.0.0.1 only. DynamoDB Local's own entry
// point binds every interface and has no option to choose one, which would
// leave an unauthenticated database open to the local network. This launcher
// builds the same server from the same command line, points its Jetty
// connectors at the loopback address, and starts it.
//
//   java -cp DynamoDBLocal.jar Loopback.java -port 8000 -inMemory -sharedDb
import java.lang.reflect.Field;

import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

public class Loopback {
    public static void main(String[] args) throws Exception {
        DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
        Field f = DynamoDBProxyServer.class.getDeclaredField("server");
        f.setAccessible(true);
        Server server = (Server) f.get(proxy);
        int bound = 0;
        for (Connector c : server.getConnectors()) {
            if (c instanceof ServerConnector sc) {
                sc.setHost("127.0.0.1");
                bound++;
            }
        }
        if (bound == 0) {
            throw new IllegalStateException("DynamoDB Local has no connector to bind to 127.0.0.1");
        }
        proxy.start();
        System.out.println("DynamoDB Local listening on 127.0.0.1 only");
    }
}
