// Filled in by the database test harness (template database, migrations).
export default async function setup(): Promise<void> {}
