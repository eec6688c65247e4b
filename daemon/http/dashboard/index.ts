export { createDashboard, type Dashboard, type DashboardDeps } from './dashboard.js';
export { createDashboardService, type DashboardService, type Overview, type WorkspaceCard } from './dashboard-service.js';
export { ReadingHistory, type HistoryPoint, type HistorySeries } from './history.js';
export { escapeHtml, renderMarkdown } from './markdown.js';
export { cookieName, DashboardSessions, readCookie, SESSION_TTL_MS, TICKET_TTL_MS } from './session.js';
export { PAGE_HEADERS } from './routes.js';
